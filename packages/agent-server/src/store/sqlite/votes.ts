import type { ClaimBatchRequest, ClaimBatchResult, NewEvent, StoredEvent, VoteWrite } from '../store.ts'
import { toThread } from '../rows.ts'
import { claimRefusal } from '../refusals.ts'
import { RollbackWith } from '../rollback-with.ts'
import { insertOutboxTx } from './outbox.ts'
import type { SqliteStatements } from './statements.ts'

/**
 * A vote's write in the SQLite store (docs/approvals.md#organisation-policies), inside the claim's `BEGIN IMMEDIATE`
 * transaction: the batch's vote count is the condition, so of two votes judged against the same count one is written
 * and the other judged again. A settling vote is then the ordinary claim (`claim`), its record marked.
 */
export function voteTx(
  s: SqliteStatements,
  request: ClaimBatchRequest & { readonly vote: VoteWrite },
  claim: () => ClaimBatchResult,
): ClaimBatchResult {
  const { threadId, batchId, runId, vote } = request
  // A reminder is no vote: it needs the batch open, not a count.
  const counted =
    vote.kind === 'reminder'
      ? s.getBatch.get(batchId, threadId)?.status === 'pending'
      : s.countVote.run({ threadId, batchId, expectedVotes: vote.expectedVotes }).changes === 1
  if (!counted) {
    const batch = s.getBatch.get(batchId, threadId)
    return batch?.status === 'pending' ? { ok: false, reason: 'votes_changed' } : claimRefusal(batch)
  }
  const voteColumns = { voteKind: vote.kind, voteStage: vote.stage }
  if (vote.settles) {
    const claimed = claim()
    if (!claimed.ok) throw new RollbackWith(claimed)
    s.markVoteDecision.run({ threadId, runId, ...voteColumns })
    return claimed
  }
  const entries = JSON.stringify(request.decision)
  if (s.insertVoteDecision.run({ ...request, entries, ...voteColumns }).changes === 0)
    throw new RollbackWith<ClaimBatchResult>({ ok: false, reason: 'run_exists' })
  insertOutboxTx(s, request.outbox, request.now)
  const events = vote.events === undefined ? undefined : voteRunTx(s, request, vote.events, vote.outcomeJson ?? '{}')
  return { ok: true, thread: toThread(s.getThread.get(threadId)!), ...(events ? { events } : {}) }
}

/** The vote's short run in the paused thread's log (`VoteWrite.events`). */
function voteRunTx(
  s: SqliteStatements,
  request: ClaimBatchRequest,
  events: readonly NewEvent[],
  outcomeJson: string,
): StoredEvent[] | undefined {
  const { threadId, runId, now } = request
  const head = events.length > 0 ? s.advanceIdleSeq.get({ threadId, count: events.length }) : undefined
  // A run is active (it cannot be while the batch is open): the vote stands, its events are left out.
  if (head === undefined) return undefined
  if (s.insertVoteRun.run({ threadId, runId, outcomeJson, now }).changes === 0)
    throw new RollbackWith<ClaimBatchResult>({ ok: false, reason: 'run_exists' })
  let seq = head.last_seq - events.length
  return events.map((event) => {
    seq += 1
    s.insertEvent.run({ threadId, seq, runId, type: event.type, json: event.json })
    return { seq, runId, type: event.type, json: event.json }
  })
}
