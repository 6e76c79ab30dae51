import type { Interrupt, InterludeError, ResumeEntry } from '@interlude/protocol'
import { checkResume, isExpiredAt, resumeCheckError } from '@interlude/protocol'
import { clientError } from './errors.ts'
import type { CoreState, Interaction } from './reducer.ts'
import { snapshotProblem } from './snapshot-problems.ts'
import type { ConversationSnapshot, PendingInterruptBatch, RestoreOptions, ResumeOptions } from './types.ts'

/**
 * The refusals of the runtime's commands as pure functions of the state (docs/client-contract.md):
 * each returns the `InterludeError` to throw, or `undefined` when the command may proceed. Every
 * refusal text is written here once; the runtime and the driver only throw what these return.
 */

/** A batch is claimed from the synchronous claim in `resume` until its resumed interaction settles. */
export function isClaimed(run: Interaction | undefined): boolean {
  return run !== undefined && (run.claimId !== undefined || run.resumed)
}

export function disposedRefusal(): InterludeError {
  return clientError('INVALID_STATE', 'The runtime is disposed.')
}

function recoveryRefusal(s: CoreState): InterludeError | undefined {
  return s.recovery.required
    ? clientError('RECOVERY_REQUIRED', 'Recovery requires a new thread or a restored conversation.')
    : undefined
}

/** `sendMessage`, `reload`, `setMessages` and `newThread` on the same id: the history is locked. */
export function messagesRefusal(s: CoreState, what: string): InterludeError | undefined {
  const recovery = recoveryRefusal(s)
  if (recovery) return recovery
  if (s.pending || isClaimed(s.run)) {
    return clientError('INVALID_STATE', `Cannot ${what} while an interrupt batch is pending or claimed.`, {
      reason: 'interrupts_pending',
    })
  }
  return s.run
    ? clientError('INVALID_STATE', `Cannot ${what} while a run is in progress.`, { reason: 'busy' })
    : undefined
}

/** `setState`: allowed while idle and while awaiting answers, refused once claimed or running. */
export function stateRefusal(s: CoreState): InterludeError | undefined {
  if (!s.run) return undefined
  return clientError(
    'INVALID_STATE',
    isClaimed(s.run)
      ? 'Cannot set shared state while an interrupt batch is claimed.'
      : 'Cannot set shared state while a run is in progress.',
  )
}

/** `restoreConversation` and `recover`: only while no run is active. */
export function activeRunRefusal(s: CoreState, what: 'restore' | 'recover'): InterludeError | undefined {
  return s.run ? clientError('INVALID_STATE', `Cannot ${what} while a run is active.`, { reason: 'busy' }) : undefined
}

/** Any expired interrupt blocks the whole batch (checked at the claim and before every send). */
export function expiryRefusal(interrupts: readonly Interrupt[], now: number): InterludeError | undefined {
  const expired = interrupts.filter((i) => isExpiredAt(i.expiresAt, now)).map((i) => i.id)
  if (expired.length === 0) return undefined
  return clientError('INTERRUPT_EXPIRED', 'The interrupt batch has expired; start a new thread to continue.', {
    interruptIds: expired,
  })
}

export type ResumeAdmission =
  | { readonly ok: false; readonly error: InterludeError }
  | { readonly ok: true; readonly batch: PendingInterruptBatch; readonly entries: readonly ResumeEntry[] }

/** The `resume` check order (README "resume check order"); on success the batch and the normalised entries. */
export function admitResume(s: CoreState, options: ResumeOptions, clock: () => number): ResumeAdmission {
  const refuse = (error: InterludeError) => ({ ok: false, error }) as const
  const recovery = recoveryRefusal(s)
  if (recovery) return refuse(recovery)
  if (isClaimed(s.run)) return refuse(clientError('BATCH_CLAIMED', 'Interrupt batch already claimed.'))
  const batch = s.pending
  if (!batch || typeof options !== 'object' || options === null || options.batchId !== batch.id)
    return refuse(clientError('STALE_BATCH', 'Stale interrupt batch.'))
  if (s.run) return refuse(clientError('INVALID_STATE', 'A run is in progress.'))
  const now = clock()
  const expired = expiryRefusal(batch.interrupts, now)
  if (expired) return refuse(expired)
  const check = checkResume(batch.interrupts, options.entries, { now, expiry: 'refuse-all' })
  if (!check.ok) return refuse(resumeCheckError(check))
  return { ok: true, batch, entries: check.entries }
}

/** `restoreConversation`: idle, the captured revision, a structurally valid snapshot of this thread. */
export function restoreRefusal(
  s: CoreState,
  snapshot: ConversationSnapshot,
  options: RestoreOptions,
): InterludeError | undefined {
  const busy = activeRunRefusal(s, 'restore')
  if (busy) return busy
  if (options?.expectedRevision !== s.recovery.revision) {
    return clientError('INVALID_STATE', 'The conversation changed since its revision was captured.', {
      reason: 'stale_revision',
    })
  }
  const problem = snapshotProblem(snapshot, s.threadId)
  if (problem === undefined) return undefined
  return clientError('INVALID_INPUT', `Invalid conversation snapshot: ${problem}.`, {
    reason: 'invalid_snapshot',
    problem,
  })
}
