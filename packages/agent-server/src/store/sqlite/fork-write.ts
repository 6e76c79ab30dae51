import type Database from 'better-sqlite3'
import type { NewFork } from '../forks.ts'
import { TERMINAL_CALL_STATUSES } from '../statuses.ts'
import { sqlList } from '../sql-literals.ts'
import { writeTransaction } from './write-transaction.ts'

const TERMINAL = sqlList(TERMINAL_CALL_STATUSES)

/** Messages copied per transaction: SQLite has one writer, so no transaction of a fork may hold it for long. */
export const FORK_PAGE_MESSAGES = 1000

/** A reservation older than this whose fork never finished (its process died) may be taken over by a retry. */
const STALE_RESERVATION_MS = 60_000

/**
 * The SQLite fork (`../forks.ts`) in short transactions, the event loop free between them: (1) the fork's key is
 * reserved by its origin row (a second fork with the same id is refused there); (2) the prefix is copied page by page
 * into the key, invisible while no thread row exists; (3) one last transaction writes the thread row, the edits, the
 * ledger, the checkpoints and the paused batch. A fork that fails on the way removes what it wrote.
 */
export function prepareForkWrite(db: Database.Database): (fork: NewFork) => Promise<boolean> {
  const thread = db.prepare<[string], { one: number }>('SELECT 1 AS one FROM threads WHERE thread_id = ?')
  const held = prepareForkKeyGuard(db)
  const reserve = db.prepare(
    'INSERT INTO thread_forks (thread_id, parent_thread_id, at_json, created_at) VALUES (?, ?, ?, ?)',
  )
  const dropMessages = db.prepare('DELETE FROM messages WHERE thread_id = ?')
  const dropReservation = db.prepare('DELETE FROM thread_forks WHERE thread_id = ?')
  const copyPage = db.prepare(
    `INSERT INTO messages (thread_id, position, message_id, role, run_id, json, created_at)
     SELECT @threadId, position, message_id, role, run_id, json, created_at FROM messages
     WHERE thread_id = @parentThreadId AND position >= @from AND position <= @to`,
  )
  const finish = prepareFinish(db)
  /** Removes a fork that did not finish: its copied messages and its reservation (never a finished thread's). */
  const abandon = (threadId: string) =>
    writeTransaction(db, () => {
      if (thread.get(threadId)) return
      dropMessages.run(threadId)
      dropReservation.run(threadId)
    })
  return async (fork) => {
    const { threadId, now } = fork
    const reserved = writeTransaction(db, () => {
      if (thread.get(threadId) || held(threadId, now)) return false
      reserve.run(threadId, fork.parentThreadId, JSON.stringify(fork.at), now)
      return true
    })
    if (!reserved) return false
    try {
      for (let from = 0; from <= fork.lastPosition; from += FORK_PAGE_MESSAGES) {
        const to = Math.min(from + FORK_PAGE_MESSAGES - 1, fork.lastPosition)
        writeTransaction(db, () => copyPage.run({ threadId, parentThreadId: fork.parentThreadId, from, to }))
        // Other requests (a snapshot of the parent, its runs) go between two pages.
        await new Promise((resolve) => setImmediate(resolve))
      }
      if (!writeTransaction(db, () => finish(fork))) {
        abandon(threadId)
        return false
      }
      return true
    } catch (error) {
      abandon(threadId)
      throw error
    }
  }
}

/**
 * Whether a fork still copying holds the key `threadId` (its reservation, no thread row yet), inside a write
 * transaction: a new thread with that key — a fork or a first run (`startInputRun`) — must wait for it. A reservation
 * older than `STALE_RESERVATION_MS` is a fork whose process died: what it copied is removed and the key is free.
 */
export function prepareForkKeyGuard(db: Database.Database): (threadId: string, now: number) => boolean {
  const reservation = db.prepare<[string], { created_at: number }>(
    `SELECT created_at FROM thread_forks f WHERE thread_id = ?
       AND NOT EXISTS (SELECT 1 FROM threads t WHERE t.thread_id = f.thread_id)`,
  )
  const dropMessages = db.prepare('DELETE FROM messages WHERE thread_id = ?')
  const dropReservation = db.prepare('DELETE FROM thread_forks WHERE thread_id = ?')
  return (threadId, now) => {
    const row = reservation.get(threadId)
    if (!row) return false
    if (Number(row.created_at) > now - STALE_RESERVATION_MS) return true
    dropMessages.run(threadId)
    dropReservation.run(threadId)
    return false
  }
}

/** The fork's last transaction: everything but the copied prefix. `false` when a thread took the key meanwhile. */
function prepareFinish(db: Database.Database): (fork: NewFork) => boolean {
  const insertThread = db.prepare(
    `INSERT INTO threads (thread_id, owner_id, revision, status, state_json, active_run_id, last_seq, created_at, updated_at, title)
     VALUES (@threadId, @ownerId, 1, @status, @stateJson, NULL, 0, @now, @now, @title) ON CONFLICT DO NOTHING`,
  )
  const replace = db.prepare('UPDATE messages SET json = @json WHERE thread_id = @threadId AND message_id = @messageId')
  const append = db.prepare(
    `INSERT INTO messages (thread_id, position, message_id, role, run_id, json, created_at)
     VALUES (@threadId, @position, @messageId, @role, NULL, @json, @now)`,
  )
  const totals = db.prepare(
    `UPDATE threads SET message_count = (SELECT COUNT(*) FROM messages WHERE thread_id = @threadId),
       message_bytes = (SELECT COALESCE(SUM(octet_length(json)), 0) FROM messages WHERE thread_id = @threadId)
     WHERE thread_id = @threadId`,
  )
  // Settled calls come along as they are (`started` ones as `unknown`: never run again); the others are cancelled.
  const copyCalls = db.prepare(
    `INSERT INTO tool_calls (thread_id, tool_call_id, run_id, message_id, tool_name, args_text, kind, status, result,
       attempt_run_id, created_at, started_at, finished_at)
     SELECT @threadId, tc.tool_call_id, tc.run_id, tc.message_id, tc.tool_name, tc.args_text, tc.kind,
       CASE WHEN tc.tool_call_id IN (SELECT value FROM json_each(@cancelledJson)) THEN 'cancelled'
            WHEN tc.status = 'started' THEN 'unknown' WHEN tc.status IN ${TERMINAL} THEN tc.status ELSE 'cancelled' END,
       CASE WHEN tc.tool_call_id IN (SELECT value FROM json_each(@cancelledJson)) THEN @cancelResult ELSE tc.result END,
       tc.attempt_run_id, tc.created_at, tc.started_at, COALESCE(tc.finished_at, @now)
     FROM tool_calls tc JOIN messages m ON m.thread_id = tc.thread_id AND m.message_id = tc.message_id
     WHERE tc.thread_id = @parentThreadId AND m.position <= @last
       AND tc.tool_call_id NOT IN (SELECT value FROM json_each(@skipJson))`,
  )
  const insertCall = db.prepare(
    `INSERT INTO tool_calls (thread_id, tool_call_id, run_id, message_id, tool_name, args_text, kind, status, created_at)
     VALUES (@threadId, @toolCallId, @runId, @messageId, @toolName, @argsText, @kind, @status, @now)`,
  )
  const checkpoint = db.prepare(
    'INSERT INTO tool_checkpoints (thread_id, tool_call_id, json, updated_at) VALUES (?, ?, ?, ?)',
  )
  const insertRun = db.prepare(
    `INSERT INTO runs (thread_id, run_id, kind, status, outcome_json, created_at, finished_at)
     VALUES (@threadId, @runId, 'input', 'interrupted', @outcomeJson, @now, @now)`,
  )
  const insertBatch = db.prepare(
    `INSERT INTO interrupt_batches (batch_id, thread_id, run_id, status, created_at, expires_at, on_expiry,
       pause_message_count, pause_checkpoints)
     VALUES (@batchId, @threadId, @runId, 'pending', @now, @expiresAt, @onExpiry,
       (SELECT message_count FROM threads WHERE thread_id = @threadId), @checkpointsJson)`,
  )
  const insertInterrupt = db.prepare(
    `INSERT INTO interrupts (interrupt_id, batch_id, thread_id, position, kind, tool_call_id, tool_name, json)
     VALUES (@interruptId, @batchId, @threadId, @position, @kind, @toolCallId, @toolName, @json)`,
  )
  return (fork) => {
    const { threadId, now } = fork
    const status = fork.batch ? 'interrupted' : 'idle'
    const created = insertThread.run({ ...fork, status, title: fork.title ?? null })
    if (created.changes === 0) return false
    for (const m of fork.replaced) replace.run({ threadId, messageId: m.id, json: JSON.stringify(m) })
    fork.appended.forEach((m, i) => {
      const row = { threadId, position: fork.lastPosition + 1 + i, messageId: m.id, role: m.role }
      append.run({ ...row, json: JSON.stringify(m), now })
    })
    totals.run({ threadId })
    copyCalls.run({
      threadId,
      parentThreadId: fork.parentThreadId,
      last: fork.lastPosition,
      cancelledJson: JSON.stringify(fork.cancelled.toolCallIds),
      cancelResult: fork.cancelled.result,
      skipJson: JSON.stringify(fork.skipCallIds),
      now,
    })
    for (const call of fork.calls) insertCall.run({ ...call, threadId, now })
    for (const [id, json] of Object.entries(fork.checkpoints)) checkpoint.run(threadId, id, json, now)
    const batch = fork.batch
    if (batch) {
      insertRun.run({ threadId, runId: batch.runId, outcomeJson: batch.outcomeJson, now })
      const checkpointsJson = JSON.stringify(fork.checkpoints)
      insertBatch.run({ ...batch, threadId, now, checkpointsJson })
      batch.interrupts.forEach((item, position) => {
        const json = JSON.stringify(item.interrupt)
        insertInterrupt.run({
          ...item,
          interruptId: item.interrupt.id,
          batchId: batch.batchId,
          threadId,
          position,
          json,
        })
      })
    }
    return true
  }
}
