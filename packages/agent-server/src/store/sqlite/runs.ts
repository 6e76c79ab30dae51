import type { AbandonedRunsQuery, RunHeartbeat, RunKey, RunRecord, TakeOverRequest } from '../store.ts'
import { toRun, toRunHeartbeat, toRunKey } from '../rows.ts'
import type { SqliteStatements } from './statements.ts'

/**
 * Runs in the SQLite store: reads, the cancel flag, and the leases by which processes sharing the file execute them
 * and take over the runs of one that died (docs/architecture.md#durable-continuation). The `…Tx` writes run inside
 * the caller's write transaction.
 */

export function getRun(s: SqliteStatements, threadId: string, runId: string): RunRecord | undefined {
  const row = s.getRun.get(threadId, runId)
  return row ? toRun(row) : undefined
}

/** Sets the cancel flag of a running run; answers the run as it is now. */
export function requestCancelTx(
  s: SqliteStatements,
  threadId: string,
  runId: string,
  now: number,
): RunRecord | undefined {
  s.requestCancel.run({ threadId, runId, now })
  return getRun(s, threadId, runId)
}

/** Renews the leases of the executor's running runs; answers them with their cancel flags. */
export function heartbeatRunsTx(s: SqliteStatements, executorId: string, leaseUntil: number): RunHeartbeat[] {
  return s.heartbeatRuns.all({ leaseUntil, executorId }).map(toRunHeartbeat)
}

export function listAbandonedRuns(s: SqliteStatements, query: AbandonedRunsQuery): RunKey[] {
  const rows = s.listAbandoned.all({
    now: query.now,
    all: query.all ? 1 : 0,
    exclude: query.excludeExecutor ?? null,
  })
  return rows.map(toRunKey)
}

/** One conditional update: the run is the taker's, or `undefined` (someone else's, or not running). */
export function takeOverRunTx(s: SqliteStatements, request: TakeOverRequest): RunRecord | undefined {
  if (s.takeOverRun.run({ ...request, force: request.force ? 1 : 0 }).changes === 0) return undefined
  return toRun(s.getRun.get(request.threadId, request.runId)!)
}
