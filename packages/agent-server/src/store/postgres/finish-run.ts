import type { FinishRunRequest, StoredEvent } from '../store.ts'
import { appendEventsTx, appendMessagesTx } from './appends.ts'
import { insertOutboxTx } from './outbox.ts'
import type { Queryable } from './query.ts'
import * as sql from './statements.ts'

/**
 * The end of a run in the PostgreSQL store, inside the caller's transaction: the run's status, the calls it leaves
 * closed with their messages, its state, its terminal events, its batch closed, the thread released and the webhooks
 * (docs/architecture.md#the-write-order-rule). `undefined` (nothing written) unless the run is still `running`. The
 * caller announces the new log head once it committed.
 */
export async function finishRunTx(q: Queryable, request: FinishRunRequest): Promise<StoredEvent[] | undefined> {
  const { threadId, runId, now } = request
  // Thread row first (the lock order of every write), then the run.
  await q.query(sql.lockThread(threadId))
  if ((await q.query(sql.finishRun(request))).rowCount === 0) return undefined
  for (const call of request.closeCalls ?? []) {
    const closed = await q.query(sql.closeToolCall(threadId, call, now))
    if (closed.rowCount === 1) await appendMessagesTx(q, threadId, runId, [call.message], now)
  }
  // No revision bump of its own: the release below is this transaction's one (docs/architecture.md).
  if (request.state !== undefined) await q.query(sql.replaceState(threadId, JSON.stringify(request.state)))
  const stored = await appendEventsTx(q, threadId, runId, request.events)
  if (request.closeBatch) await q.query(sql.closeBatch(request.closeBatch.batchId, request.closeBatch.status, now))
  await q.query(sql.releaseThread(threadId, runId, now))
  await insertOutboxTx(q, request.outbox, now)
  return stored
}
