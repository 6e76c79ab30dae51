import type { Message } from '@interlude/protocol'
import type { Clock } from '../../clock.ts'
import { appendMessagesTx, fenceTx } from './appends.ts'
import type { SqliteStatements } from './statements.ts'

/** A run's writes to its thread's history and state in the SQLite store, inside the caller's write transaction. */

/** Fenced: the messages at the next positions, and a new revision; `now` is read inside the transaction. */
export function appendRunMessagesTx(
  s: SqliteStatements,
  threadId: string,
  runId: string,
  messages: readonly Message[],
  now: Clock,
): void {
  const at = now()
  fenceTx(s, threadId, runId)
  appendMessagesTx(s, threadId, runId, messages, at)
  s.bumpRevision.run({ threadId, now: at })
}

export function setStateTx(s: SqliteStatements, threadId: string, state: unknown, now: Clock): void {
  s.setState.run({ threadId, stateJson: JSON.stringify(state ?? null), now: now() })
}
