import type { Interrupt, ResumeEntry } from '@interlude/protocol'
import { InterludeError } from '@interlude/protocol'

/** A batch from the inbox (`PendingBatch`), a snapshot's `{ interrupts }`, or the interrupts themselves. */
export type BatchLike = { readonly interrupts: readonly Interrupt[] } | readonly Interrupt[]

export interface ApproveAllOptions {
  /**
   * Payloads by interrupt id. Required for every interrupt that is not a tool approval (`input_required`
   * and any other reason: only the caller knows the answer); for a tool approval it replaces the default
   * `{ approved: true }`, e.g. `{ approved: true, editedArgs: {…} }`.
   */
  readonly payloads?: Readonly<Record<string, unknown>>
  /** Added as `reason` to every default approval payload (at most 2000 characters, docs/protocol.md). */
  readonly reason?: string
}

const TOOL_CALL = 'tool_call'

function interruptsOf(batch: BatchLike): readonly Interrupt[] {
  return Array.isArray(batch) ? batch : (batch as { readonly interrupts: readonly Interrupt[] }).interrupts
}

/**
 * `resolved` entries approving every interrupt of a batch (the approval schema of docs/protocol.md).
 * Throws `RESUME_INCOMPLETE` (with `details.problems`, as `checkResume` reports it) when an interrupt is
 * not a tool approval and `payloads` has no answer for it: approving a question means nothing.
 */
export function approveAll(batch: BatchLike, options: ApproveAllOptions = {}): ResumeEntry[] {
  const interrupts = interruptsOf(batch)
  const payloads = options.payloads ?? {}
  const missing = interrupts.filter(
    (i) => i.reason !== TOOL_CALL && !Object.prototype.hasOwnProperty.call(payloads, i.id),
  )
  if (missing.length > 0) {
    const interruptIds = missing.map((i) => i.id)
    throw new InterludeError(
      'RESUME_INCOMPLETE',
      `approveAll needs a payload for every interrupt that is not a tool approval (${interruptIds.join(', ')}).`,
      { details: { problems: [{ kind: 'missing', interruptIds, partial: missing.length < interrupts.length }] } },
    )
  }
  return interrupts.map((i) => ({
    interruptId: i.id,
    status: 'resolved',
    payload: Object.prototype.hasOwnProperty.call(payloads, i.id)
      ? payloads[i.id]
      : options.reason === undefined
        ? { approved: true }
        : { approved: true, reason: options.reason },
  }))
}

/**
 * Entries denying every tool approval of a batch (`{ approved: false, reason? }`, a resolved denial: the
 * model is told). An interrupt of another reason is `cancelled`, as the server's `deny` expiry policy does
 * (docs/approvals.md, "Deadlines"): there is no "no" to a question.
 */
export function denyAll(batch: BatchLike, reason?: string): ResumeEntry[] {
  return interruptsOf(batch).map((i) =>
    i.reason === TOOL_CALL
      ? {
          interruptId: i.id,
          status: 'resolved',
          payload: reason === undefined ? { approved: false } : { approved: false, reason },
        }
      : { interruptId: i.id, status: 'cancelled' },
  )
}

/**
 * Entries cancelling every interrupt: nothing runs and the turn ends without another model call. The one
 * answer an expired batch still admits (docs/protocol.md, "Interrupts and resume entries").
 */
export function cancelAll(batch: BatchLike): ResumeEntry[] {
  return interruptsOf(batch).map((i) => ({ interruptId: i.id, status: 'cancelled' }))
}
