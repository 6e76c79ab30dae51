import type { AbandonedRunsQuery, RunHeartbeat, RunKey, RunRecord, TakeOverRequest } from '../store.ts'
import { toRun, toRunHeartbeat, toRunKey } from '../rows.ts'
import type { Queryable } from './query.ts'
import { rows } from './query.ts'
import * as sql from './statements.ts'

/**
 * Runs in the PostgreSQL store: reads, the cancel flag (NOTIFYed to every replica), and the leases by which replicas
 * execute them and take over the runs of one that died (docs/architecture.md#durable-continuation). Each is one
 * statement.
 */

export async function getRun(q: Queryable, threadId: string, runId: string): Promise<RunRecord | undefined> {
  const row = (await rows(q, sql.getRun(threadId, runId)))[0]
  return row ? toRun(row) : undefined
}

/** Sets the cancel flag of a running run and notifies `channel`; answers the run as it is now. */
export async function requestCancel(
  q: Queryable,
  threadId: string,
  runId: string,
  now: number,
  channel: string,
): Promise<RunRecord | undefined> {
  const flagged = (await rows(q, sql.requestCancel(threadId, runId, now, channel)))[0]
  if (flagged) return toRun(flagged)
  return getRun(q, threadId, runId)
}

/** Renews the leases of the executor's running runs; answers them with their cancel flags. */
export async function heartbeatRuns(q: Queryable, executorId: string, leaseUntil: number): Promise<RunHeartbeat[]> {
  return (await rows(q, sql.heartbeatRuns(executorId, leaseUntil))).map(toRunHeartbeat)
}

export async function listAbandonedRuns(q: Queryable, query: AbandonedRunsQuery): Promise<RunKey[]> {
  return (await rows(q, sql.listAbandoned(query))).map(toRunKey)
}

/** One conditional update: the run is the taker's, or `undefined` (someone else's, or not running). */
export async function takeOverRun(q: Queryable, request: TakeOverRequest): Promise<RunRecord | undefined> {
  const row = (await rows(q, sql.takeOverRun(request)))[0]
  return row ? toRun(row) : undefined
}
