import type { FinishRunRequest, StoredEvent } from '../store.ts'
import { appendEventsTx, appendMessagesTx } from './appends.ts'
import { insertOutboxTx } from './outbox.ts'
import type { SqliteStatements } from './statements.ts'

/**
 * The end of a run in the SQLite store, inside the caller's write transaction: the run's status, the calls it leaves
 * closed with their messages, its state, its terminal events, its batch closed, the thread released and the webhooks
 * — one transaction (docs/architecture.md#the-write-order-rule). `undefined` (nothing written) unless the run is still
 * `running`.
 */
export function finishRunTx(s: SqliteStatements, request: FinishRunRequest): StoredEvent[] | undefined {
  const { threadId, runId, now } = request
  const outcomeJson = request.outcome === undefined ? null : JSON.stringify(request.outcome)
  if (s.finishRun.run({ ...request, outcomeJson, errorCode: request.errorCode ?? null }).changes === 0) return undefined
  for (const call of request.closeCalls ?? []) {
    const closed = s.closeToolCall.run({ ...call, threadId, now, fromJson: JSON.stringify(call.from) }).changes
    if (closed === 1) appendMessagesTx(s, threadId, runId, [call.message], now)
  }
  // No revision bump of its own: the release below is this transaction's one (docs/architecture.md).
  if (request.state !== undefined) s.replaceState.run({ threadId, stateJson: JSON.stringify(request.state) })
  const stored = appendEventsTx(s, threadId, runId, request.events)
  if (request.closeBatch) s.closeBatch.run({ ...request.closeBatch, now })
  const status = s.getOpenBatch.get(threadId) ? 'interrupted' : 'idle'
  s.releaseThread.run({ threadId, runId, status, now })
  insertOutboxTx(s, request.outbox, now)
  return stored
}
