import type { Interrupt, ResumeEntry } from '@interlude/protocol'
import { checkResume, isExpiredAt, resumeCheckError } from '@interlude/protocol'
import { clientError } from './errors.ts'
import type { CoreState } from './reducer.ts'
import { snapshotProblem } from './snapshot-problems.ts'
import type { ConversationSnapshot, PendingInterruptBatch, RestoreOptions, ResumeOptions, WhileBusy } from './types.ts'

/**
 * The refusals of the runtime's commands (docs/client-contract.md), as checks that depend only on
 * their arguments: each throws its refusal as an `InterludeError` and otherwise returns (`checkResumable`
 * with the checked batch and entries). Every refusal text is written here once; the runtime and
 * the driver call these and nothing else refuses a command. A batch is claimed from the synchronous claim in
 * `resume` until that interaction settles: while the run is of kind `resume`.
 */

export function checkAlive(disposed: boolean): void {
  if (disposed) throw clientError('INVALID_STATE', 'The runtime is disposed.')
}

function checkRecovery(s: CoreState): void {
  if (s.recovery.required)
    throw clientError('RECOVERY_REQUIRED', 'Recovery requires a new thread or a restored conversation.')
}

/** `sendMessage`, `reload`, `setMessages` and `newThread` on the same id: the history is locked. */
export function checkMessagesUnlocked(s: CoreState, what: string): void {
  checkRecovery(s)
  if (s.pending || s.run?.kind === 'resume')
    throw clientError('INVALID_STATE', `Cannot ${what} while an interrupt batch is pending or claimed.`, {
      reason: 'interrupts_pending',
    })
  if (s.run) throw clientError('INVALID_STATE', `Cannot ${what} while a run is in progress.`, { reason: 'busy' })
  checkNotBranching(s, what)
}

/** A branch command in flight locks the history until it switched threads or failed (docs/react-runtime.md#branches). */
export function checkNotBranching(s: CoreState, what: string): void {
  if (s.branching !== undefined)
    throw clientError('INVALID_STATE', `Cannot ${what} while a branch is being opened.`, { reason: 'branching' })
}

/**
 * `sendMessage` with `whileBusy` while a run is active or messages are queued: the same locks as `sendMessage`, except
 * the run itself (docs/react-runtime.md#many-messages-one-thread).
 */
export function checkSendableWhileBusy(s: CoreState, strategy: WhileBusy): void {
  checkRecovery(s)
  if (s.pending)
    throw clientError('INVALID_STATE', 'Cannot send a message while an interrupt batch is pending or claimed.', {
      reason: 'interrupts_pending',
    })
  // A resumed turn cancelled midway cannot be replayed (`recovery.required`): it is not interrupted from here.
  if (strategy === 'interrupt' && s.run?.kind === 'resume')
    throw clientError('INVALID_STATE', 'Cannot interrupt a resumed turn.', { reason: 'resuming' })
}

/** `setState`: allowed while idle and while awaiting answers, refused once claimed or running. */
export function checkStateUnlocked(s: CoreState): void {
  if (s.run)
    throw clientError(
      'INVALID_STATE',
      s.run.kind === 'resume'
        ? 'Cannot set shared state while an interrupt batch is claimed.'
        : 'Cannot set shared state while a run is in progress.',
    )
}

/** `restoreConversation`, `recover` and `switchBranch`: only while no run is active. */
export function checkNoActiveRun(s: CoreState, what: 'restore' | 'recover' | 'switch branches'): void {
  if (s.run) throw clientError('INVALID_STATE', `Cannot ${what} while a run is active.`, { reason: 'busy' })
}

/** A batch kept open past its deadline (`metadata.onExpiry: 'keep'`, docs/approvals.md#deadlines). */
export function isKept(interrupts: readonly Interrupt[]): boolean {
  return interrupts.some((i) => (i.metadata as { onExpiry?: unknown } | undefined)?.onExpiry === 'keep')
}

/**
 * Any expired interrupt blocks the whole batch (checked at the claim and before every send), except
 * the all-cancelled close of a `keep` batch, which the server admits past the deadline.
 */
export function checkNotExpired(interrupts: readonly Interrupt[], now: number, entries?: readonly ResumeEntry[]): void {
  if (entries && isKept(interrupts) && entries.every((e) => e.status === 'cancelled')) return
  const expired = interrupts.filter((i) => isExpiredAt(i.expiresAt, now)).map((i) => i.id)
  if (expired.length > 0)
    throw clientError('INTERRUPT_EXPIRED', 'The interrupt batch has expired; start a new thread to continue.', {
      interruptIds: expired,
    })
}

/**
 * The `resume` check order (docs/react-runtime.md#interactions-and-the-driver); returns the batch and the normalised
 * entries.
 */
export function checkResumable(
  s: CoreState,
  options: ResumeOptions,
  clock: () => number,
): { readonly batch: PendingInterruptBatch; readonly entries: readonly ResumeEntry[] } {
  checkRecovery(s)
  if (s.run?.kind === 'resume') throw clientError('BATCH_CLAIMED', 'Interrupt batch already claimed.')
  const batch = s.pending
  if (!batch || typeof options !== 'object' || options === null || options.batchId !== batch.id)
    throw clientError('STALE_BATCH', 'Stale interrupt batch.')
  if (s.run) throw clientError('INVALID_STATE', 'A run is in progress.')
  const now = clock()
  const kept = isKept(batch.interrupts)
  if (!kept) checkNotExpired(batch.interrupts, now)
  const check = checkResume(batch.interrupts, options.entries, { now, expiry: kept ? 'refuse-resolved' : 'refuse-all' })
  if (!check.ok) throw resumeCheckError(check)
  return { batch, entries: check.entries }
}

/** `restoreConversation`: idle, the captured revision, a structurally valid snapshot of this thread. */
export function checkRestorable(s: CoreState, snapshot: ConversationSnapshot, options: RestoreOptions): void {
  checkNoActiveRun(s, 'restore')
  if (options?.expectedRevision !== s.recovery.revision)
    throw clientError('INVALID_STATE', 'The conversation changed since its revision was captured.', {
      reason: 'stale_revision',
    })
  const problem = snapshotProblem(snapshot, s.threadId)
  if (problem !== undefined)
    throw clientError('INVALID_INPUT', `Invalid conversation snapshot: ${problem}.`, {
      reason: 'invalid_snapshot',
      problem,
    })
}
