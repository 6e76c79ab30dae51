import type { Message } from '@interlude/protocol'
import type { MessagePageQuery, StoredMessage, ThreadQuery, ThreadRecord } from '../store.ts'
import { toStoredMessage, toThread } from '../rows.ts'
import type { Queryable } from './query.ts'
import { rows } from './query.ts'
import * as sql from './statements.ts'

/** Reads of threads and their histories in the PostgreSQL store, each one statement. */

export async function getThread(q: Queryable, threadId: string): Promise<ThreadRecord | undefined> {
  const row = (await rows(q, sql.getThread(threadId)))[0]
  return row ? toThread(row) : undefined
}

export async function listThreads(q: Queryable, ownerId: string, query: ThreadQuery): Promise<ThreadRecord[]> {
  return (await rows(q, sql.listThreads(ownerId, query))).map(toThread)
}

/** The owner's running threads (the concurrent-runs quota). */
export async function countRunningRuns(q: Queryable, ownerId: string): Promise<number> {
  return (await rows(q, sql.countRunning(ownerId)))[0]?.n ?? 0
}

export async function listMessages(q: Queryable, threadId: string): Promise<Message[]> {
  return (await rows(q, sql.listMessages(threadId))).map((r) => JSON.parse(r.json) as Message)
}

export async function listMessagePage(
  q: Queryable,
  threadId: string,
  query: MessagePageQuery,
): Promise<StoredMessage[]> {
  return (await rows(q, sql.messagePage(threadId, query))).map(toStoredMessage)
}

export async function getFirstUserMessage(q: Queryable, threadId: string): Promise<StoredMessage | undefined> {
  const row = (await rows(q, sql.firstUserMessage(threadId)))[0]
  return row ? toStoredMessage(row) : undefined
}
