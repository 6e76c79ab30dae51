import { defineTool } from '../agent/tool.ts'

/** What the demo records of a confirmed rollback (docs/demo-agent.md). */
export interface RollbackRecord {
  readonly version: string
  readonly toolCallId: string
  /** The operation ids of the deployments it rolled back. */
  readonly deployments: string[]
}

interface RollbackState {
  deployments: { operationId: string; version: string; environment: 'staging' | 'production' }[]
  rollbacks?: RollbackRecord[]
}

export const ROLLBACK_CONFIRM_SCHEMA = {
  type: 'object',
  title: 'Confirm the rollback',
  properties: { confirm: { type: 'boolean', title: 'Roll back these deployments' } },
  required: ['confirm'],
  additionalProperties: false,
} as const

/**
 * `rollback` needs no approval up front: it finds the affected deployments itself and asks from inside `execute`
 * (docs/approvals.md#asking-from-inside-a-tool). Everything before `ctx.interrupt` only reads state, so running it
 * again on resume is harmless; the state change comes after the answer.
 */
export const rollback = defineTool<{ version: string }, RollbackState>({
  name: 'rollback',
  description: 'Roll back the deployments of a version (asks for confirmation).',
  parameters: {
    type: 'object',
    properties: { version: { type: 'string', minLength: 1, maxLength: 64 } },
    required: ['version'],
    additionalProperties: false,
  },
  approval: 'never',
  execute: async ({ version }, ctx) => {
    const affected = ctx.state.deployments.filter((d) => d.version === version)
    const listed =
      affected.length === 0
        ? 'no recorded deployments'
        : affected.map((d) => `${d.environment} (operation ${d.operationId})`).join(', ')
    const { confirm } = await ctx.interrupt<{ confirm: boolean }>({
      reason: 'confirmation',
      message: `Roll back ${version}? Affected deployments: ${listed}.`,
      responseSchema: ROLLBACK_CONFIRM_SCHEMA,
      metadata: { version, affected: affected.map((d) => d.operationId) },
    })
    if (!confirm) return { rolledBack: false, version }
    const record: RollbackRecord = {
      version,
      toolCallId: ctx.idempotencyKey,
      deployments: affected.map((d) => d.operationId),
    }
    ctx.updateState((state) => {
      const rollbacks = state.rollbacks ?? []
      return rollbacks.some((r) => r.toolCallId === record.toolCallId)
        ? state
        : { ...state, rollbacks: [...rollbacks, record] }
    })
    return { rolledBack: true, ...record }
  },
})
