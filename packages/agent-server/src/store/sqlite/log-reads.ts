import type { EventQuery, StoredEvent, ThreadHead } from '../store.ts'
import { toStoredEvent, toThreadHead } from '../rows.ts'
import type { SqliteStatements } from './statements.ts'

/** Reads of the per-thread event log in the SQLite store (appends are in `appends.ts`). */

/** The thread's events after `afterSeq`, or one run's, oldest first. */
export function readEvents(s: SqliteStatements, threadId: string, query: EventQuery): StoredEvent[] {
  const after = query.afterSeq ?? 0
  const limit = query.limit ?? -1
  const rows =
    query.runId === undefined
      ? s.readEvents.all({ threadId, after, limit })
      : s.readRunEvents.all({ threadId, runId: query.runId, after, limit })
  return rows.map(toStoredEvent)
}

/** The log heads of the given threads, in one query (the log poll). */
export function pollThreads(s: SqliteStatements, threadIds: readonly string[]): ThreadHead[] {
  if (threadIds.length === 0) return []
  return s.pollThreads.all(JSON.stringify(threadIds)).map(toThreadHead)
}
