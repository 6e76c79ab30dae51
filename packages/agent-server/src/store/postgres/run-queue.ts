import type pg from 'pg'
import type {
  EnqueueRequest,
  EnqueueResult,
  QueuedInput,
  QueueRow,
  TakenSteers,
  TakeSteersRequest,
} from '../run-queue.ts'
import { QUEUE_COLUMNS, steerMessages, toQueued } from '../run-queue.ts'
import { appendEventsTx, appendMessagesTx } from './appends.ts'
import type { Queryable } from './query.ts'
import { fenced, rows, statement } from './query.ts'
import * as sql from './statements.ts'
import { transaction } from './transaction.ts'

/** Steers the running run may take: a row whose runId is a run already is the start of that run, not a steer. */
const WAITING_STEERS = `FROM run_queue q WHERE q.thread_id = $1 AND q.steer = 1
  AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.thread_id = q.thread_id AND r.run_id = q.run_id)`

/**
 * The run queue in PostgreSQL (docs/decisions.md#a-durable-run-queue). An enqueue locks the thread's row first, so
 * concurrent enqueues on one thread, from any replica, are serialised and the positions they answer are exact.
 */
export async function enqueueInput(pool: pg.Pool, request: EnqueueRequest): Promise<EnqueueResult> {
  const { threadId, runId } = request
  return transaction(pool, async (q) => {
    await q.query(statement('SELECT 1 FROM threads WHERE thread_id = $1 FOR UPDATE', [threadId]))
    const [known] = await rows(
      q,
      statement<{ seq: string; steer: number }>(
        'SELECT seq, steer FROM run_queue WHERE thread_id = $1 AND run_id = $2',
        [threadId, runId],
      ),
    )
    if (known)
      return { position: await positionOf(q, threadId, Number(known.seq)), created: false, steer: known.steer === 1 }
    const [bounds] = await rows(
      q,
      statement<{ lo: string | null; hi: string | null }>(
        'SELECT MIN(seq) AS lo, MAX(seq) AS hi FROM run_queue WHERE thread_id = $1',
        [threadId],
      ),
    )
    const seq = request.front ? Number(bounds?.lo ?? 1) - 1 : Number(bounds?.hi ?? 0) + 1
    const steer = request.steer === true
    await q.query(
      statement(
        `INSERT INTO run_queue (thread_id, run_id, owner_id, seq, input, created_at, steer)
         VALUES ($1, $2, $3, $4, $5, $6, $7)`,
        [threadId, runId, request.ownerId, seq, request.input, request.now, steer ? 1 : 0],
      ),
    )
    return { position: await positionOf(q, threadId, seq), created: true, steer }
  })
}

async function positionOf(q: Queryable, threadId: string, seq: number): Promise<number> {
  const [row] = await rows(
    q,
    statement<{ n: number }>('SELECT COUNT(*)::int AS n FROM run_queue WHERE thread_id = $1 AND seq <= $2', [
      threadId,
      seq,
    ]),
  )
  return row?.n ?? 1
}

export async function listQueuedInputs(q: Queryable, threadId: string): Promise<QueuedInput[]> {
  const found = await rows(
    q,
    statement<QueueRow>(`SELECT ${QUEUE_COLUMNS} FROM run_queue WHERE thread_id = $1 ORDER BY seq`, [threadId]),
  )
  return found.map((row, index) => toQueued(row, index))
}

export async function removeQueuedInput(q: Queryable, threadId: string, runId: string): Promise<boolean> {
  const result = await q.query(
    statement('DELETE FROM run_queue WHERE thread_id = $1 AND run_id = $2', [threadId, runId]),
  )
  return (result.rowCount ?? 0) > 0
}

export async function listStartableQueues(q: Queryable, limit: number): Promise<string[]> {
  const found = await rows(
    q,
    statement<{ thread_id: string }>(
      `SELECT q.thread_id FROM run_queue q JOIN threads t ON t.thread_id = q.thread_id
        WHERE t.active_run_id IS NULL GROUP BY q.thread_id ORDER BY MIN(q.created_at) LIMIT $1`,
      [limit],
    ),
  )
  return found.map((row) => row.thread_id)
}

export async function hasSteers(q: Queryable, threadId: string): Promise<boolean> {
  return (await rows(q, statement(`SELECT 1 ${WAITING_STEERS} LIMIT 1`, [threadId]))).length > 0
}

export async function messageRunId(q: Queryable, threadId: string, messageId: string): Promise<string | undefined> {
  const [row] = await rows(
    q,
    statement<{ run_id: string | null }>('SELECT run_id FROM messages WHERE thread_id = $1 AND message_id = $2', [
      threadId,
      messageId,
    ]),
  )
  return row?.run_id ?? undefined
}

/**
 * `takeSteers` (`../run-queue.ts`): the thread row is locked first (the fence), so an enqueue, a queue start or another
 * take of this thread waits for this transaction; the rows are removed with `RETURNING`, so each steer is taken once.
 */
export async function takeSteers(pool: pg.Pool, request: TakeSteersRequest): Promise<TakenSteers> {
  const { threadId, runId, now } = request
  return transaction(pool, async (q) => {
    await fenced(q, sql.lockIfActive(threadId, runId), threadId, runId)
    const taken = await rows(
      q,
      statement<{ input: string; seq: string }>(
        `DELETE FROM run_queue WHERE (thread_id, run_id) IN (SELECT q.thread_id, q.run_id ${WAITING_STEERS})
         RETURNING input, seq`,
        [threadId],
      ),
    )
    if (taken.length === 0) return { messages: [], events: [] }
    taken.sort((x, y) => Number(x.seq) - Number(y.seq))
    const candidates = taken.flatMap((row) => steerMessages(row.input, () => false).map((m) => m.id))
    const found = await rows(
      q,
      statement<{ message_id: string }>(
        'SELECT message_id FROM messages WHERE thread_id = $1 AND message_id = ANY($2::text[])',
        [threadId, candidates],
      ),
    )
    const known = new Set(found.map((row) => row.message_id))
    const messages = taken.flatMap((row) => {
      const added = steerMessages(row.input, (id) => known.has(id))
      for (const m of added) known.add(m.id)
      return added
    })
    if (messages.length === 0) return { messages, events: [] }
    await q.query(sql.bumpIfActive(threadId, runId, now))
    await appendMessagesTx(q, threadId, runId, messages, now)
    return { messages, events: await appendEventsTx(q, threadId, runId, messages.flatMap(request.render)) }
  })
}
