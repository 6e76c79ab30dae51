import type Database from 'better-sqlite3'
import type { ClaimBatchRequest, ClaimBatchResult, StartInputRunRequest, StartRunResult } from '../store.ts'
import { toThread } from '../rows.ts'
import { claimRefusal, startRefusal } from '../refusals.ts'
import { rolledBack, RollbackWith } from '../rollback-with.ts'
import { appendMessagesTx } from './appends.ts'
import { insertOutboxTx } from './outbox.ts'
import type { SqliteStatements } from './statements.ts'
import { voteTx } from './votes.ts'

/**
 * The two admission writes of the SQLite store, each the body of one `BEGIN IMMEDIATE` transaction
 * (the store's `#write`): the conditional updates decide, not process memory. A refusal found
 * after something was written throws `RollbackWith`, so nothing stays behind.
 */

/** `forkKeyHeld`: whether a fork still copying holds a new thread's key (`fork-write.ts`, docs/time-travel.md#cost). */
export function startInputRunTx(
  s: SqliteStatements,
  request: StartInputRunRequest,
  forkKeyHeld: (threadId: string, now: number) => boolean,
): StartRunResult {
  const { threadId, runId, now, expectedRevision } = request
  if (expectedRevision === null) {
    if (s.getThread.get(threadId) || forkKeyHeld(threadId, now)) return { ok: false, reason: 'thread_exists' }
    const title = request.title ?? null
    s.insertThread.run({ ...request, stateJson: JSON.stringify(request.initialState ?? null), title })
  } else if (s.claimThreadForInput.run({ threadId, runId, now, expectedRevision }).changes === 0) {
    return startRefusal(s.getThread.get(threadId), expectedRevision)
  }
  if (s.getRun.get(threadId, runId)) throw new RollbackWith<StartRunResult>({ ok: false, reason: 'run_exists' })
  s.insertRun.run({
    ...request,
    kind: 'input',
    parentRunId: request.parentRunId ?? null,
    batchId: null,
    decisionHash: null,
  })
  appendMessagesTx(s, threadId, runId, request.messages, now)
  // A thread created without a user message gets its title from the first one (docs/decisions.md#bounded-histories:
  // stored, never derived).
  if (expectedRevision !== null && request.title !== undefined)
    s.setTitleIfAbsent.run({ threadId, title: request.title })
  for (const r of request.toolResults) s.settleToolCall.run({ ...r, threadId, now })
  return { ok: true, thread: toThread(s.getThread.get(threadId)!) }
}

/** Writes the grants a decision makes (`grants.ts`), inside the claim's transaction. */
export type GrantsWrite = (grants: ClaimBatchRequest['grants']) => void

export function claimBatchTx(
  s: SqliteStatements,
  request: ClaimBatchRequest,
  writeGrants: GrantsWrite = () => undefined,
): ClaimBatchResult {
  const { linkId, vote } = request
  // A decision link (docs/approvals.md#deciding-outside-the-app): its row first, so a second use is refused; a refused
  // claim rolls the row back.
  if (linkId !== undefined && !s.decisionLinks.spendTx({ ...request, linkId }))
    return { ok: false, reason: 'link_used' }
  // A vote (docs/approvals.md#organisation-policies) is written under the batch's vote count, or settles it by a claim.
  const claim = () => claimOpenBatchTx(s, request, writeGrants)
  const claimed = vote !== undefined ? voteTx(s, { ...request, vote }, claim) : claim()
  if (linkId !== undefined && !claimed.ok) throw new RollbackWith(claimed)
  return claimed
}

function claimOpenBatchTx(s: SqliteStatements, request: ClaimBatchRequest, writeGrants: GrantsWrite): ClaimBatchResult {
  const { threadId, runId, batchId } = request
  const decisionJson = JSON.stringify(request.decision)
  // First admitted wins: the first claim of the open batch.
  if (s.claimBatch.run({ ...request, decisionJson }).changes === 0) {
    return claimRefusal(s.getBatch.get(batchId, threadId))
  }
  // The same order of refusals as PostgreSQL's one statement: a busy thread, then a taken run id.
  if (s.claimThreadForResume.run(request).changes === 0)
    throw new RollbackWith<ClaimBatchResult>({ ok: false, reason: 'busy' })
  if (s.getRun.get(threadId, runId)) throw new RollbackWith<ClaimBatchResult>({ ok: false, reason: 'run_exists' })
  s.insertRun.run({ ...request, kind: 'resume', parentRunId: null })
  // Who decided commits with the claim or not at all, and is never rewritten (docs/approvals.md#decision-records).
  s.insertDecision.run({ ...request, entries: decisionJson })
  insertOutboxTx(s, request.outbox, request.now)
  writeGrants(request.grants)
  return { ok: true, thread: toThread(s.getThread.get(threadId)!) }
}

/**
 * Several claims inside one transaction (`claimBatches`): each in its own savepoint, so a refused one leaves nothing
 * behind and the others commit together.
 */
export function claimBatchesTx(
  db: Database.Database,
  s: SqliteStatements,
  requests: readonly ClaimBatchRequest[],
  writeGrants?: GrantsWrite,
): ClaimBatchResult[] {
  // Called inside a transaction, a better-sqlite3 transaction function runs as a savepoint.
  const claim = db.transaction((request: ClaimBatchRequest) => claimBatchTx(s, request, writeGrants))
  return requests.map((request) => {
    try {
      return claim(request)
    } catch (error) {
      const refused = rolledBack<ClaimBatchResult>(error)
      if (refused) return refused.value
      throw error
    }
  })
}
