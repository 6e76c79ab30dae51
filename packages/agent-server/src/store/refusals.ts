import type {
  BeginEffectResult,
  ClaimBatchResult,
  ClaimToolCallResult,
  StartRunResult,
  ToolCallRecord,
} from './store.ts'
import type { BatchRow, ThreadRow } from './rows.ts'
import { OPEN_BATCH_STATUS } from './statuses.ts'

/**
 * Why an admission or an effect was refused, decided once for both stores. Each store makes its
 * conditional write in its own SQL; when that write changes nothing, it reads the rows named here
 * in the same transaction (or right after, for a single-statement write) and asks these functions.
 */

export type StartRefusal = Extract<StartRunResult, { ok: false }>
export type ClaimRefusal = Extract<ClaimBatchResult, { ok: false }>

/**
 * `startInputRun` on an existing thread claims it only at the expected revision, idle, with no open
 * batch. In that order: another revision, then a run holding it, otherwise the open batch.
 */
export function startRefusal(
  thread: Pick<ThreadRow, 'revision' | 'active_run_id'> | undefined,
  expectedRevision: number,
): StartRefusal {
  if (!thread || thread.revision !== expectedRevision) return { ok: false, reason: 'revision_changed' }
  if (thread.active_run_id !== null) return { ok: false, reason: 'busy' }
  return { ok: false, reason: 'interrupted' }
}

/**
 * `claimBatch` needs the batch (of this thread) open and the thread free. In that order: a batch
 * someone claimed names its claimer, so a lost race is told who won (and with which decision); an
 * open batch means the thread was busy; anything else (closed, expired, unknown) is not pending.
 */
export function claimRefusal(
  batch: Pick<BatchRow, 'status' | 'claimed_by_run_id' | 'decision_hash'> | undefined,
): ClaimRefusal {
  if (batch && batch.claimed_by_run_id !== null && batch.decision_hash !== null) {
    return {
      ok: false,
      reason: 'already_claimed',
      claimedByRunId: batch.claimed_by_run_id,
      decisionHash: batch.decision_hash,
    }
  }
  if (batch?.status === OPEN_BATCH_STATUS) return { ok: false, reason: 'busy' }
  return { ok: false, reason: 'not_pending' }
}

/** `beginEffect` changed nothing: the run lost the thread, was asked to stop, or the call already started. */
export function effectRefusal(run: { readonly active: boolean; readonly cancelRequested: boolean }): BeginEffectResult {
  if (!run.active) return 'not_active'
  if (run.cancelRequested) return 'cancel_requested'
  return 'already_started'
}

/** A refused `claimToolCall`: a browser call still waiting is held by another claim; anything else is not claimable. */
export function toolCallClaimRefusal(
  call: Pick<ToolCallRecord, 'kind' | 'status'> | undefined,
): Extract<ClaimToolCallResult, { ok: false }> {
  if (call?.kind === 'client' && call.status === 'awaiting_result') return { ok: false, reason: 'taken' }
  return { ok: false, reason: 'not_claimable' }
}
