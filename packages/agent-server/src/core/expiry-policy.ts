import type { ExpiryPolicy, InterruptExpiryPolicy, ResumeEntry } from '@interlude/protocol'
import type { ResolvedTool } from '../agent/tool.ts'
import type { ValidatorCache } from '../schema/validator-cache.ts'
import { UNDECIDED_EXPIRY_POLICY } from '../store/statuses.ts'
import type { BatchRecord, InterruptKind, StoredInterrupt } from '../store/store.ts'

/**
 * Deadlines (docs/approvals.md#deadlines): which policy an interrupt gets, what its batch stores, and the answer the
 * expiry sweep gives in place of a person. Everything here is derived from what the batch stored, never from the
 * tools as configured now, so every replica (and a restarted server) decides a batch the same way.
 */

/** The server-wide settings a batch is created with. */
export interface ExpiryDefaults {
  /** `interruptTtlSeconds` in ms: the timeout of a tool that sets none. */
  readonly ttlMs: number
  /** The server-wide `onExpiry`; `undefined`: by kind (`deny` for approvals, `cancel` for questions). */
  readonly onExpiry: ExpiryPolicy | undefined
}

/** The payload of an approval denied by its deadline; it matches every approval schema (docs/protocol.md). */
export const EXPIRED_DENIAL = { approved: false, reason: 'expired' } as const

/** The payload of an approval granted by its deadline (`onExpiry: 'approve'`, docs/approvals.md#organisation-policies). */
export const EXPIRED_APPROVAL = { approved: true, reason: 'expired' } as const

/**
 * Where each interrupt carries its own policy: `metadata.onExpiry` (what happens to it at the deadline, so a client
 * can say so). A batch whose interrupts disagree stores one column; this is what keeps each one's answer.
 */
export const EXPIRY_METADATA_KEY = 'onExpiry'

/** A tool's own setting wins over the server's, which wins over the default by kind. */
export function interruptPolicy(
  tool: ResolvedTool,
  kind: InterruptKind,
  defaults: ExpiryDefaults,
): InterruptExpiryPolicy {
  const own = tool.definition.onExpiry
  // `approve` answers an approval only; a question of the same tool is cancelled instead.
  if (own === 'approve' && kind !== 'approval') return 'cancel'
  return own ?? defaults.onExpiry ?? (kind === 'approval' ? 'deny' : 'cancel')
}

/**
 * The batch's stored policy: `keep` if any interrupt keeps (nothing is decided for the person); otherwise `deny`
 * when the deadline denies at least one approval (the model is told and the turn goes on), else `cancel` (every
 * entry cancelled: the turn ends without a model call).
 */
export function batchPolicy(
  interrupts: readonly { kind: InterruptKind; onExpiry: InterruptExpiryPolicy }[],
): ExpiryPolicy {
  if (interrupts.some((i) => i.onExpiry === UNDECIDED_EXPIRY_POLICY)) return UNDECIDED_EXPIRY_POLICY
  // An approval the deadline grants is answered too (the batch stores `deny`; its own policy is in its metadata).
  const answered = (p: InterruptExpiryPolicy) => p === 'deny' || p === 'approve'
  return interrupts.some((i) => answered(i.onExpiry) && i.kind === 'approval') ? 'deny' : 'cancel'
}

/** An interrupt's own policy; batches stored without one in their metadata answer by the batch's. */
export function policyOf(item: StoredInterrupt, batch: ExpiryPolicy): InterruptExpiryPolicy {
  if (batch === UNDECIDED_EXPIRY_POLICY) return batch
  const own = item.interrupt.metadata?.[EXPIRY_METADATA_KEY]
  return own === 'deny' || own === 'cancel' || own === 'approve' ? own : batch
}

/** Whether the sweep decides this batch now: open, past its deadline, and not kept. */
export function isDue(batch: BatchRecord, now: number): boolean {
  return batch.status === 'pending' && batch.onExpiry !== UNDECIDED_EXPIRY_POLICY && now >= batch.expiresAt
}

/**
 * Whether the snapshot and the inboxes show an open batch: until its deadline, and after it only when it is kept
 * (a deny/cancel batch past its deadline is about to be decided by the sweep).
 */
export function isShown(batch: BatchRecord, now: number): boolean {
  return now < batch.expiresAt || batch.onExpiry === UNDECIDED_EXPIRY_POLICY
}

/** The decision the deadline makes for a batch; `undefined` for a kept one. */
export interface ExpiryDecision {
  readonly entries: readonly ResumeEntry[]
  readonly allCancelled: boolean
}

/**
 * Per interrupt: `deny` resolves an approval as `{ approved: false, reason: 'expired' }` (checked against its
 * responseSchema like a person's answer; a schema that refuses it gets a cancellation), anything else is cancelled
 * — there is no "no" to a question.
 */
export function expiryDecision(batch: BatchRecord, validators: ValidatorCache): ExpiryDecision | undefined {
  if (batch.onExpiry === UNDECIDED_EXPIRY_POLICY) return undefined
  const entries = batch.interrupts.map((item): ResumeEntry => {
    const interruptId = item.interrupt.id
    const policy = policyOf(item, batch.onExpiry)
    if ((policy === 'deny' || policy === 'approve') && item.kind === 'approval') {
      const payload = policy === 'approve' ? { ...EXPIRED_APPROVAL } : { ...EXPIRED_DENIAL }
      const schema = item.interrupt.responseSchema
      if (schema === undefined || validators.validate(schema, payload).ok)
        return { interruptId, status: 'resolved', payload }
    }
    return { interruptId, status: 'cancelled' }
  })
  return { entries, allCancelled: entries.every((e) => e.status === 'cancelled') }
}

/** The run that carries out a batch's expiry: one id per batch, so every replica's claim names the same run. */
export function expiryRunId(batchId: string): string {
  return `run_expiry_${batchId}`
}
