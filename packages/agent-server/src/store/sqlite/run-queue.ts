import type Database from 'better-sqlite3'
import type {
  EnqueueRequest,
  EnqueueResult,
  QueuedInput,
  QueueRow,
  TakenSteers,
  TakeSteersRequest,
} from '../run-queue.ts'
import { QUEUE_COLUMNS, steerMessages, toQueued } from '../run-queue.ts'
import { appendEventsTx, appendMessagesTx, fenceTx } from './appends.ts'
import type { SqliteStatements } from './statements.ts'

/** Steers the running run may take: a row whose runId is a run already is the start of that run, not a steer. */
const WAITING_STEERS = `FROM run_queue q WHERE q.thread_id = ? AND q.steer = 1
  AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.thread_id = q.thread_id AND r.run_id = q.run_id)`

/**
 * The run queue in SQLite (docs/decisions.md#a-durable-run-queue). The enqueue runs in the store's `BEGIN IMMEDIATE`
 * write transaction, which serialises writers across processes: its position is exact.
 */
export function sqliteRunQueue(db: Database.Database) {
  const existing = db.prepare<[string, string], { seq: number; steer: number }>(
    'SELECT seq, steer FROM run_queue WHERE thread_id = ? AND run_id = ?',
  )
  const bounds = db.prepare<[string], { lo: number | null; hi: number | null }>(
    'SELECT MIN(seq) AS lo, MAX(seq) AS hi FROM run_queue WHERE thread_id = ?',
  )
  const insert = db.prepare<[string, string, string, number, string, number, number]>(
    'INSERT INTO run_queue (thread_id, run_id, owner_id, seq, input, created_at, steer) VALUES (?, ?, ?, ?, ?, ?, ?)',
  )
  const positionOf = db.prepare<[string, number], { n: number }>(
    'SELECT COUNT(*) AS n FROM run_queue WHERE thread_id = ? AND seq <= ?',
  )
  const list = db.prepare<[string], QueueRow>(`SELECT ${QUEUE_COLUMNS} FROM run_queue WHERE thread_id = ? ORDER BY seq`)
  const remove = db.prepare<[string, string]>('DELETE FROM run_queue WHERE thread_id = ? AND run_id = ?')
  const startable = db.prepare<[number], { thread_id: string }>(
    `SELECT q.thread_id FROM run_queue q JOIN threads t ON t.thread_id = q.thread_id
      WHERE t.active_run_id IS NULL GROUP BY q.thread_id ORDER BY MIN(q.created_at) LIMIT ?`,
  )
  const hasSteers = db.prepare<[string], { ok: number }>(`SELECT 1 AS ok ${WAITING_STEERS} LIMIT 1`)
  const steers = db.prepare<[string], { run_id: string; input: string }>(
    `SELECT q.run_id, q.input ${WAITING_STEERS} ORDER BY q.seq`,
  )
  const messageRun = db.prepare<[string, string], { run_id: string | null }>(
    'SELECT run_id FROM messages WHERE thread_id = ? AND message_id = ?',
  )
  return {
    enqueueTx(request: EnqueueRequest): EnqueueResult {
      const { threadId, runId } = request
      const known = existing.get(threadId, runId)
      if (known)
        return { position: positionOf.get(threadId, known.seq)?.n ?? 1, created: false, steer: known.steer === 1 }
      const { lo, hi } = bounds.get(threadId) ?? { lo: null, hi: null }
      const seq = request.front ? (lo ?? 1) - 1 : (hi ?? 0) + 1
      const steer = request.steer === true
      insert.run(threadId, runId, request.ownerId, seq, request.input, request.now, steer ? 1 : 0)
      return { position: positionOf.get(threadId, seq)?.n ?? 1, created: true, steer }
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
    hasSteers(threadId: string): boolean {
      return hasSteers.get(threadId) !== undefined
    },
    messageRunId(threadId: string, messageId: string): string | undefined {
      return messageRun.get(threadId, messageId)?.run_id ?? undefined
    },
    /** `takeSteers` inside the store's write transaction (one writer at a time: nobody else takes or starts them). */
    takeTx(s: SqliteStatements, request: TakeSteersRequest): TakenSteers {
      const { threadId, runId, now } = request
      fenceTx(s, threadId, runId)
      const taken = new Set<string>()
      const known = (id: string) => taken.has(id) || messageRun.get(threadId, id) !== undefined
      const messages = steers.all(threadId).flatMap((row) => {
        remove.run(threadId, row.run_id)
        const added = steerMessages(row.input, known)
        for (const m of added) taken.add(m.id)
        return added
      })
      if (messages.length === 0) return { messages, events: [] }
      appendMessagesTx(s, threadId, runId, messages, now)
      s.bumpRevision.run({ threadId, now })
      return { messages, events: appendEventsTx(s, threadId, runId, messages.flatMap(request.render)) }
    },
  }
}
