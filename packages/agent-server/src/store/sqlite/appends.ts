import type { Message } from '@interlude/protocol'
import { RunNotActiveError } from '../store.ts'
import type { NewEvent, StoredEvent } from '../store.ts'
import type { SqliteStatements } from './statements.ts'

/** The appends every SQLite write transaction shares; each runs inside the caller's transaction. */

/** Fenced: only the thread's active run advances its log (otherwise `RunNotActiveError`, nothing written). */
export function appendEventsTx(
  s: SqliteStatements,
  threadId: string,
  runId: string,
  events: readonly NewEvent[],
): StoredEvent[] {
  if (events.length === 0) return []
  const head = s.advanceSeq.get({ threadId, runId, count: events.length })
  if (!head) throw new RunNotActiveError(threadId, runId)
  let seq = head.last_seq - events.length
  return events.map((event) => {
    seq += 1
    s.insertEvent.run({ threadId, seq, runId, type: event.type, json: event.json })
    return { seq, runId, type: event.type, json: event.json }
  })
}

/** Messages at the next positions of the thread (the transaction's write lock keeps them free). */
export function appendMessagesTx(
  s: SqliteStatements,
  threadId: string,
  runId: string,
  messages: readonly Message[],
  now: number,
): void {
  if (messages.length === 0) return
  let position = s.nextPosition.get(threadId)!.next
  let bytes = 0
  for (const message of messages) {
    const json = JSON.stringify(message)
    bytes += Buffer.byteLength(json, 'utf8')
    s.insertMessage.run({ threadId, position, messageId: message.id, role: message.role, runId, json, now })
    position += 1
  }
  s.addMessageTotals.run({ threadId, count: messages.length, bytes })
}

/** Throws unless `runId` is the thread's active run (inside a write transaction). */
export function fenceTx(s: SqliteStatements, threadId: string, runId: string): void {
  if (!s.isActive.get({ threadId, runId })) throw new RunNotActiveError(threadId, runId)
}
