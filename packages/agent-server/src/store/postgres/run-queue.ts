import type pg from 'pg'
import type { EnqueueRequest, EnqueueResult, QueuedInput, QueueRow } from '../run-queue.ts'
import { toQueued } from '../run-queue.ts'
import type { Queryable } from './query.ts'
import { rows, statement } from './query.ts'
import { transaction } from './transaction.ts'

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
      statement<{ seq: string }>('SELECT seq FROM run_queue WHERE thread_id = $1 AND run_id = $2', [threadId, runId]),
    )
    if (known) return { position: await positionOf(q, threadId, Number(known.seq)), created: false }
    const [bounds] = await rows(
      q,
      statement<{ lo: string | null; hi: string | null }>(
        'SELECT MIN(seq) AS lo, MAX(seq) AS hi FROM run_queue WHERE thread_id = $1',
        [threadId],
      ),
    )
    const seq = request.front ? Number(bounds?.lo ?? 1) - 1 : Number(bounds?.hi ?? 0) + 1
    await q.query(
      statement(
        'INSERT INTO run_queue (thread_id, run_id, owner_id, seq, input, created_at) VALUES ($1, $2, $3, $4, $5, $6)',
        [threadId, runId, request.ownerId, seq, request.input, request.now],
      ),
    )
    return { position: await positionOf(q, threadId, seq), created: true }
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
    statement<QueueRow>(
      'SELECT thread_id, run_id, owner_id, input, created_at FROM run_queue WHERE thread_id = $1 ORDER BY seq',
      [threadId],
    ),
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
