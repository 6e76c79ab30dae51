import type { PoolClient, QueryConfig, QueryResultRow } from 'pg'
import { RunNotActiveError } from '../store.ts'

/** How the PostgreSQL store runs its statements (`statements.ts`, `admission-statements.ts`). */

/** A pool, a pooled client or a client inside a transaction. */
export type Queryable = Pick<PoolClient, 'query'>

/** One parameterised statement; `Row` types what it returns (never set: only carried to `rows()`). */
export interface Statement<Row extends QueryResultRow = QueryResultRow> extends QueryConfig<unknown[]> {
  readonly row?: Row
}

export function statement<Row extends QueryResultRow = QueryResultRow>(
  text: string,
  values: unknown[],
): Statement<Row> {
  return { text, values }
}

export async function rows<Row extends QueryResultRow>(q: Queryable, query: Statement<Row>): Promise<Row[]> {
  return (await q.query<Row>(query)).rows
}

/** Runs a fenced write: one that changes nothing unless `runId` is the thread's active run. */
export async function fenced(q: Queryable, query: Statement, threadId: string, runId: string): Promise<void> {
  if ((await q.query(query)).rowCount === 0) throw new RunNotActiveError(threadId, runId)
}
