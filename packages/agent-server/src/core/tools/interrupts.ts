import { randomUUID } from 'node:crypto'
import type { InterruptExpiryPolicy } from '@interlude/protocol'
import type { JsonSchema, ResolvedTool } from '../../agent/tool.ts'
import { grantOffered } from '../../agent/tool-grant.ts'
import type { NewBatch, StoredInterrupt } from '../../store/store.ts'
import type { ExpiryDefaults } from '../expiry-policy.ts'
import { batchPolicy, EXPIRY_METADATA_KEY, interruptPolicy } from '../expiry-policy.ts'

/** An interrupt before its batch is stored: what it is, and its own deadline and policy. */
export interface PendingInterrupt {
  readonly stored: StoredInterrupt
  readonly timeoutMs: number
  readonly onExpiry: InterruptExpiryPolicy
}

/**
 * The interrupt of an undecided call (docs/protocol.md): `input_required` for a human tool,
 * `tool_call` (an approval) otherwise. Its `expiresAt` is stamped once per batch (`interruptBatch`).
 */
export function interruptFor(
  tool: ResolvedTool,
  toolCallId: string,
  args: unknown,
  expiry: ExpiryDefaults,
  observed?: { readonly value: unknown },
): PendingInterrupt {
  const stored = storedInterrupt(tool, toolCallId, args, observed)
  // docs/approvals.md#deadlines: a tool's own timeout, else the server's TTL.
  return { stored, timeoutMs: tool.timeoutMs ?? expiry.ttlMs, onExpiry: interruptPolicy(tool, stored.kind, expiry) }
}

function storedInterrupt(
  tool: ResolvedTool,
  toolCallId: string,
  args: unknown,
  observed: { readonly value: unknown } | undefined,
): StoredInterrupt {
  const request = interruptRequest(tool, toolCallId, args)
  // docs/approvals.md#stale-approvals: what the approval is about, as the tool observed it at the pause.
  const interrupt = observed ? { ...request, metadata: { ...request.metadata, observed: observed.value } } : request
  return { kind: tool.definition.human ? 'input' : 'approval', toolCallId, toolName: tool.name, interrupt }
}

/** An interrupt of a call before its deadline is stamped. */
export interface InterruptRequest {
  readonly id: string
  readonly reason: 'input_required' | 'tool_call'
  readonly message: string
  readonly toolCallId: string
  readonly responseSchema: JsonSchema
  readonly metadata: Record<string, unknown>
}

/**
 * What a person is asked about a call, before its deadline is stamped: the tool's `human` question, or an approval
 * with the arguments (subagents ask the same, with their own ids added).
 */
export function interruptRequest(
  tool: ResolvedTool,
  toolCallId: string,
  args: unknown,
  options: { readonly grants?: boolean } = {},
): InterruptRequest {
  const id = `int_${randomUUID()}`
  const human = tool.definition.human
  if (human) {
    return {
      id,
      reason: 'input_required',
      message: human.message(args),
      toolCallId,
      responseSchema: human.responseSchema,
      metadata: { toolName: tool.name },
    }
  }
  return {
    id,
    reason: 'tool_call',
    message: tool.definition.approvalMessage?.(args) ?? `Allow ${tool.name} with ${JSON.stringify(args)}?`,
    toolCallId,
    // docs/approvals.md#bounded-grants: `grant` is offered only for the calls the tool says a grant may approve.
    responseSchema: offersGrant(tool, args, options) ? tool.grant!.approvalSchema : tool.approvalSchema,
    metadata: { toolName: tool.name, arguments: args, allowEdits: tool.definition.allowEdits === true },
  }
}

function offersGrant(tool: ResolvedTool, args: unknown, options: { readonly grants?: boolean }): boolean {
  return options.grants !== false && tool.grant !== undefined && grantOffered(tool.definition.grant, args)
}

/**
 * The batch to store. One clock read per batch: every interrupt and the stored batch share one
 * expiry (the smallest timeout of its interrupts), so admission, the snapshot and the inbox agree.
 * Each interrupt carries the policy that applies to it in `metadata.onExpiry` (`keep` for all when one keeps).
 */
export function interruptBatch(
  run: { readonly threadId: string; readonly runId: string },
  interrupts: readonly PendingInterrupt[],
  createdAt: number,
): NewBatch {
  const expiresAt = createdAt + Math.min(...interrupts.map((i) => i.timeoutMs))
  const expiresAtIso = new Date(expiresAt).toISOString()
  const onExpiry = batchPolicy(interrupts.map((i) => ({ kind: i.stored.kind, onExpiry: i.onExpiry })))
  return {
    batchId: `batch_${randomUUID()}`,
    threadId: run.threadId,
    runId: run.runId,
    interrupts: interrupts.map(({ stored, onExpiry: own }): StoredInterrupt => {
      const policy = onExpiry === 'keep' ? onExpiry : own
      const metadata = { ...stored.interrupt.metadata, [EXPIRY_METADATA_KEY]: policy }
      return { ...stored, interrupt: { ...stored.interrupt, expiresAt: expiresAtIso, metadata } }
    }),
    createdAt,
    expiresAt,
    onExpiry,
  }
}
