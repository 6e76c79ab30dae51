import { randomUUID } from 'node:crypto'
import { canonicalJson, STALE_INTERRUPT_REASON } from '@interlude/protocol'
import type { Interrupt } from '@interlude/protocol'
import type { PolicyContext, ResolvedTool } from '../../agent/tool.ts'
import type { ExpiryDefaults } from '../expiry-policy.ts'
import { interruptPolicy } from '../expiry-policy.ts'
import { strictJson } from '../strict-json.ts'
import type { PendingInterrupt } from './interrupts.ts'

/**
 * The stale-approval guard (docs/approvals.md#stale-approvals): a tool's `observe(args, ctx)` is a JSON fingerprint of
 * what an approval is about. It is taken at the pause (`interrupt.metadata.observed`) and again after the approval,
 * before `execute`; when the two differ the call does not run and is asked again (`interlude:stale`).
 */

export type Observation = { readonly ok: true; readonly value: unknown } | { readonly ok: false }

/** The tool's fingerprint for these arguments as JSON (`undefined` is `null`); a throwing `observe` is `ok: false`. */
export async function observeCall(
  tool: ResolvedTool,
  args: unknown,
  ctx: PolicyContext,
  logError: (message: string, error: unknown) => void,
): Promise<Observation> {
  try {
    const value = await tool.definition.observe!(args, ctx)
    return { ok: true, value: JSON.parse(strictJson(value === undefined ? null : value)) as unknown }
  } catch (error) {
    logError(`observe of ${tool.name} threw`, error)
    return { ok: false }
  }
}

export function sameObservation(a: unknown, b: unknown): boolean {
  return canonicalJson(a) === canonicalJson(b)
}

/** What an interrupt was asked with, when its tool observes (`metadata.observed`). */
export function observedAt(interrupt: Interrupt): { readonly value: unknown } | undefined {
  const metadata = interrupt.metadata as Record<string, unknown> | undefined
  return metadata !== undefined && 'observed' in metadata ? { value: metadata.observed } : undefined
}

/** The arguments a stale re-ask carries (the first approval's, edits included) and whether they were edited. */
export function staleArguments(interrupt: Interrupt): { readonly args: unknown; readonly edited: boolean } | undefined {
  if (interrupt.reason !== STALE_INTERRUPT_REASON) return undefined
  const metadata = (interrupt.metadata ?? {}) as Record<string, unknown>
  return { args: metadata.arguments, edited: metadata.edited === true }
}

/**
 * The approval asked again for a call whose observation changed: reason `interlude:stale`, the tool's approval schema,
 * `metadata: { before, after, observed: after, arguments, … }`.
 */
export function staleInterruptFor(
  tool: ResolvedTool,
  toolCallId: string,
  approved: { readonly args: unknown; readonly edited: boolean },
  observed: { readonly before: unknown; readonly after: unknown },
  expiry: ExpiryDefaults,
): PendingInterrupt {
  const { args, edited } = approved
  const base = tool.definition.approvalMessage?.(args) ?? `Allow ${tool.name} with ${JSON.stringify(args)}?`
  return {
    stored: {
      kind: 'approval',
      toolCallId,
      toolName: tool.name,
      interrupt: {
        id: `int_${randomUUID()}`,
        reason: STALE_INTERRUPT_REASON,
        message: `What this approval is about changed while it waited. ${base}`,
        toolCallId,
        responseSchema: tool.approvalSchema,
        metadata: {
          toolName: tool.name,
          arguments: args,
          allowEdits: tool.definition.allowEdits === true,
          ...(edited ? { edited: true } : {}),
          before: observed.before,
          after: observed.after,
          observed: observed.after,
        },
      },
    },
    timeoutMs: tool.timeoutMs ?? expiry.ttlMs,
    onExpiry: interruptPolicy(tool, 'approval', expiry),
  }
}
