import type { Message } from '@interlude/protocol'
import type { MessagePageQuery, StoredMessage, ThreadQuery, ThreadRecord } from '../store.ts'
import { toStoredMessage, toThread } from '../rows.ts'
import type { SqliteStatements } from './statements.ts'

/** Reads of threads and their histories in the SQLite store, each one statement. */

export function getThread(s: SqliteStatements, threadId: string): ThreadRecord | undefined {
  const row = s.getThread.get(threadId)
  return row ? toThread(row) : undefined
}

export function listThreads(s: SqliteStatements, ownerId: string, query: ThreadQuery): ThreadRecord[] {
  const after = query.after
  const rows = s.listThreads.all({
    owner: ownerId,
    status: query.status ?? null,
    afterUpdated: after ? after.updatedAt : null,
    afterThread: after ? after.threadId : null,
    pendingAt: query.pendingInterruptsAt ?? null,
    limit: query.limit,
  })
  return rows.map(toThread)
}

/** The owner's running threads (the concurrent-runs quota). */
export function countRunningRuns(s: SqliteStatements, ownerId: string): number {
  return s.countRunning.get(ownerId, ownerId)?.n ?? 0
}

export function listMessages(s: SqliteStatements, threadId: string): Message[] {
  return s.listMessages.all(threadId).map((r) => JSON.parse(r.json) as Message)
}

export function listMessagePage(s: SqliteStatements, threadId: string, query: MessagePageQuery): StoredMessage[] {
  const rows = s.messagePage.all({
    threadId,
    before: query.beforePosition ?? Number.MAX_SAFE_INTEGER,
    limit: query.limit,
    maxBytes: query.maxBytes ?? Number.MAX_SAFE_INTEGER,
  })
  return rows.map(toStoredMessage)
}

export function getFirstUserMessage(s: SqliteStatements, threadId: string): StoredMessage | undefined {
  const row = s.firstUserMessage.get(threadId)
  return row ? toStoredMessage(row) : undefined
}
