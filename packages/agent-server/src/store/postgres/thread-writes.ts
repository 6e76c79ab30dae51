import type { Message } from '@interlude/protocol'
import type { Clock } from '../../clock.ts'
import { appendMessagesTx } from './appends.ts'
import type { Queryable } from './query.ts'
import { fenced } from './query.ts'
import * as sql from './statements.ts'

/** A run's writes to its thread's history and state in the PostgreSQL store. */

/** Inside a transaction: the thread row locked and bumped while the run is active, then the messages after it. */
export async function appendRunMessagesTx(
  q: Queryable,
  threadId: string,
  runId: string,
  messages: readonly Message[],
  now: Clock,
): Promise<void> {
  const at = now()
  await fenced(q, sql.bumpIfActive(threadId, runId, at), threadId, runId)
  await appendMessagesTx(q, threadId, runId, messages, at)
}

export async function setState(q: Queryable, threadId: string, state: unknown, now: number): Promise<void> {
  await q.query(sql.setState(threadId, JSON.stringify(state ?? null), now))
}
