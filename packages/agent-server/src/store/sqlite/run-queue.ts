import type Database from 'better-sqlite3'
import type { EnqueueRequest, EnqueueResult, QueuedInput, QueueRow } from '../run-queue.ts'
import { toQueued } from '../run-queue.ts'

/**
 * The run queue in SQLite (docs/decisions.md#a-durable-run-queue). The enqueue runs in the store's `BEGIN IMMEDIATE`
 * write transaction, which serialises writers across processes: its position is exact.
 */
export function sqliteRunQueue(db: Database.Database) {
  const existing = db.prepare<[string, string], { seq: number }>(
    'SELECT seq FROM run_queue WHERE thread_id = ? AND run_id = ?',
  )
  const bounds = db.prepare<[string], { lo: number | null; hi: number | null }>(
    'SELECT MIN(seq) AS lo, MAX(seq) AS hi FROM run_queue WHERE thread_id = ?',
  )
  const insert = db.prepare<[string, string, string, number, string, number]>(
    'INSERT INTO run_queue (thread_id, run_id, owner_id, seq, input, created_at) VALUES (?, ?, ?, ?, ?, ?)',
  )
  const positionOf = db.prepare<[string, number], { n: number }>(
    'SELECT COUNT(*) AS n FROM run_queue WHERE thread_id = ? AND seq <= ?',
  )
  const list = db.prepare<[string], QueueRow>(
    'SELECT thread_id, run_id, owner_id, input, created_at FROM run_queue WHERE thread_id = ? ORDER BY seq',
  )
  const remove = db.prepare<[string, string]>('DELETE FROM run_queue WHERE thread_id = ? AND run_id = ?')
  const startable = db.prepare<[number], { thread_id: string }>(
    `SELECT q.thread_id FROM run_queue q JOIN threads t ON t.thread_id = q.thread_id
      WHERE t.active_run_id IS NULL GROUP BY q.thread_id ORDER BY MIN(q.created_at) LIMIT ?`,
  )
  return {
    enqueueTx(request: EnqueueRequest): EnqueueResult {
      const { threadId, runId } = request
      const known = existing.get(threadId, runId)
      if (known) return { position: positionOf.get(threadId, known.seq)?.n ?? 1, created: false }
      const { lo, hi } = bounds.get(threadId) ?? { lo: null, hi: null }
      const seq = request.front ? (lo ?? 1) - 1 : (hi ?? 0) + 1
      insert.run(threadId, runId, request.ownerId, seq, request.input, request.now)
      return { position: positionOf.get(threadId, seq)?.n ?? 1, created: true }
    },
    list(threadId: string): QueuedInput[] {
      return list.all(threadId).map((row, index) => toQueued(row, index))
    },
    removeTx(threadId: string, runId: string): boolean {
      return remove.run(threadId, runId).changes > 0
    },
    startable(limit: number): string[] {
      return startable.all(limit).map((row) => row.thread_id)
    },
  }
}
