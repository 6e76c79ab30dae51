import type { Message } from '@interlude/protocol'
import { RunNotActiveError } from '../store.ts'
import type { NewEvent, StoredEvent } from '../store.ts'
import type { Queryable } from './query.ts'
import { rows } from './query.ts'
import * as sql from './statements.ts'

/** The appends the PostgreSQL store's writes share, on the caller's connection (or transaction). */

/**
 * One statement, fenced: nothing when `runId` is not the thread's active run (`RunNotActiveError`). The caller
 * announces the new head once it committed (`PgNotifier`).
 */
export async function appendEventsTx(
  q: Queryable,
  threadId: string,
  runId: string,
  events: readonly NewEvent[],
): Promise<StoredEvent[]> {
  if (events.length === 0) return []
  const last = (await rows(q, sql.appendEvents(threadId, runId, events)))[0]?.last
  if (last === null || last === undefined) throw new RunNotActiveError(threadId, runId)
  const first = last - events.length + 1
  return events.map((e, i) => ({ seq: first + i, runId, type: e.type, json: e.json }))
}

/** Appends after the thread row is locked by the caller (positions cannot collide). */
export async function appendMessagesTx(
  q: Queryable,
  threadId: string,
  runId: string,
  messages: readonly Message[],
  now: number,
): Promise<void> {
  if (messages.length === 0) return
  await q.query(sql.appendMessages(threadId, runId, messages, now))
}
