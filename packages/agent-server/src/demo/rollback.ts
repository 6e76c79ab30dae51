import { randomUUID } from 'node:crypto'
import { defineTool } from '../agent/tool.ts'

/** What the demo records of a confirmed rollback (docs/demo-agent.md). */
export interface RollbackRecord {
  readonly version: string
  readonly toolCallId: string
  /** The operation ids of the deployments it rolled back. */
  readonly deployments: string[]
}

/** The pre-rollback snapshot (docs/demo-agent.md): taken once per rollback call, whatever its questions. */
export interface SnapshotRecord {
  readonly snapshotId: string
  readonly version: string
  readonly toolCallId: string
  /** The operation ids of the deployments it would roll back. */
  readonly deployments: string[]
}

interface RollbackState {
  deployments: { operationId: string; version: string; environment: 'staging' | 'production' }[]
  rollbacks?: RollbackRecord[]
  snapshots?: SnapshotRecord[]
}

export const ROLLBACK_CONFIRM_SCHEMA = {
  type: 'object',
  title: 'Confirm the rollback',
  properties: { confirm: { type: 'boolean', title: 'Roll back these deployments' } },
  required: ['confirm'],
  additionalProperties: false,
} as const

export const ROLLBACK_DOUBLE_CHECK_SCHEMA = {
  type: 'object',
  title: 'Confirm again',
  properties: { confirm: { type: 'boolean', title: 'Yes, roll back now' } },
  required: ['confirm'],
  additionalProperties: false,
} as const

/**
 * `rollback` needs no approval up front: it finds the affected deployments itself and asks from inside `execute`
 * (docs/approvals.md#asking-from-inside-a-tool), twice with `doubleCheck`. `execute` runs again from the top on each
 * answer, so the pre-rollback snapshot — a side effect before the questions — is a memoised step
 * (docs/approvals.md#memoised-steps): taken (and appended to `state.snapshots`) once per call. The rollback itself
 * comes after the last answer.
 */
export const rollback = defineTool<{ version: string; doubleCheck?: boolean }, RollbackState>({
  name: 'rollback',
  description: 'Roll back the deployments of a version (asks for confirmation).',
  parameters: {
    type: 'object',
    properties: { version: { type: 'string', minLength: 1, maxLength: 64 }, doubleCheck: { type: 'boolean' } },
    required: ['version'],
    additionalProperties: false,
  },
  approval: 'never',
  execute: async ({ version, doubleCheck }, ctx) => {
    const affected = ctx.state.deployments.filter((d) => d.version === version)
    const snapshot = await ctx.step('snapshot', () => {
      const taken: SnapshotRecord = {
        snapshotId: `snap_${randomUUID()}`,
        version,
        toolCallId: ctx.idempotencyKey,
        deployments: affected.map((d) => d.operationId),
      }
      ctx.updateState((state) => ({ ...state, snapshots: [...(state.snapshots ?? []), taken] }))
      return taken
    })
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
    if (doubleCheck === true) {
      const again = await ctx.interrupt<{ confirm: boolean }>({
        reason: 'confirmation',
        message: `Really roll back ${version}? Snapshot ${snapshot.snapshotId} was taken before the rollback.`,
        responseSchema: ROLLBACK_DOUBLE_CHECK_SCHEMA,
        metadata: { version, snapshotId: snapshot.snapshotId },
      })
      if (!again.confirm) return { rolledBack: false, version }
    }
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
