import type { EventQuery, StoredEvent, ThreadHead } from '../store.ts'
import { toStoredEvent, toThreadHead } from '../rows.ts'
import type { Queryable } from './query.ts'
import { rows } from './query.ts'
import * as sql from './statements.ts'

/** Reads of the per-thread event log in the PostgreSQL store (appends are in `appends.ts`). */

/** The thread's events after `afterSeq`, or one run's, oldest first. */
export async function readEvents(q: Queryable, threadId: string, query: EventQuery): Promise<StoredEvent[]> {
  return (await rows(q, sql.readEvents(threadId, query))).map(toStoredEvent)
}

/** The log heads of the given threads, in one query (the log poll). */
export async function pollThreads(q: Queryable, threadIds: readonly string[]): Promise<ThreadHead[]> {
  if (threadIds.length === 0) return []
  return (await rows(q, sql.pollThreads(threadIds))).map(toThreadHead)
}
