import { createHash } from 'node:crypto'
import type { PoolClient, QueryConfig, QueryResultRow } from 'pg'
import { RunNotActiveError } from '../store.ts'

/** How the PostgreSQL store runs its statements (`statements.ts`, `admission-statements.ts`). */

/** A pool, a pooled client or a client inside a transaction. */
export type Queryable = Pick<PoolClient, 'query'>

/** One parameterised statement; `Row` types what it returns (never set: only carried to `rows()`). */
export interface Statement<Row extends QueryResultRow = QueryResultRow> extends QueryConfig<unknown[]> {
  readonly row?: Row
}

/** Statement names by text: every `statement()` text is a module constant, so the map stays small. */
const names = new Map<string, string>()

/**
 * A named statement, parsed and planned once per connection (a prepared statement) instead of on every call: on a
 * busy database the planning of the admission CTEs costs as much CPU as running them (docs/architecture.md,
 * "Replicas on PostgreSQL"). The name is a hash of the text, so one text never gets two names and two never share one.
 */
function nameOf(text: string): string {
  let name = names.get(text)
  if (name === undefined) {
    name = `il_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`
    names.set(text, name)
  }
  return name
}

export function statement<Row extends QueryResultRow = QueryResultRow>(
  text: string,
  values: unknown[],
): Statement<Row> {
  return { name: nameOf(text), text, values }
}

export async function rows<Row extends QueryResultRow>(q: Queryable, query: Statement<Row>): Promise<Row[]> {
  return (await q.query<Row>(query)).rows
}

/** Runs a fenced write: one that changes nothing unless `runId` is the thread's active run. */
export async function fenced(q: Queryable, query: Statement, threadId: string, runId: string): Promise<void> {
  if ((await q.query(query)).rowCount === 0) throw new RunNotActiveError(threadId, runId)
}
