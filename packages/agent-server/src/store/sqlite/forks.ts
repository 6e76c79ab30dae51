import type Database from 'better-sqlite3'
import type { ForkPoint, Message } from '@interlude/protocol'
import type { ForkChild, ForkMessage, ForkOrigin, ForkStore, NewFork, PausedBatch } from '../forks.ts'
import type { BatchRow, InterruptRow, ToolCallRow } from '../rows.ts'
import { toBatch, toToolCall } from '../rows.ts'
import { TERMINAL_CALL_STATUSES } from '../statuses.ts'
import { sqlList } from '../sql-literals.ts'
import { writeTransaction } from './write-transaction.ts'

type MessageRow = { position: number; run_id: string | null; json: string }
type PausedRow = BatchRow & { pause_message_count: number | null; pause_checkpoints: string | null }

const TERMINAL = sqlList(TERMINAL_CALL_STATUSES)

/** Calls recorded by the messages at positions `<= @last` whose tool message is not among them. */
const UNANSWERED = `
  WITH answered AS (
    SELECT json_extract(json, '$.toolCallId') AS id FROM messages
    WHERE thread_id = @threadId AND position <= @last AND role = 'tool')
  SELECT tc.* FROM tool_calls tc JOIN messages m ON m.thread_id = tc.thread_id AND m.message_id = tc.message_id
  WHERE tc.thread_id = @threadId AND m.position <= @last
    AND tc.tool_call_id NOT IN (SELECT id FROM answered WHERE id IS NOT NULL)
  ORDER BY m.position, tc.created_at`

/** The SQLite side of thread forks (`../forks.ts`). */
export function sqliteForks(db: Database.Database): ForkStore {
  const byId = db.prepare<[string, string], MessageRow>(
    'SELECT position, run_id, json FROM messages WHERE thread_id = ? AND message_id = ?',
  )
  const byPosition = db.prepare<[string, number], MessageRow>(
    'SELECT position, run_id, json FROM messages WHERE thread_id = ? AND position = ?',
  )
  const batchOfRun = db.prepare<[string, string], PausedRow>(
    'SELECT * FROM interrupt_batches WHERE thread_id = ? AND run_id = ? ORDER BY created_at DESC LIMIT 1',
  )
  const interrupts = db.prepare<[string], InterruptRow>(
    'SELECT interrupt_id, kind, tool_call_id, tool_name, json FROM interrupts WHERE batch_id = ? ORDER BY position',
  )
  const unanswered = db.prepare<{ threadId: string; last: number }, ToolCallRow>(UNANSWERED)
  const lastState = db.prepare<{ threadId: string; before: number | null; runId: string | null }, { json: string }>(
    `SELECT json FROM events WHERE thread_id = @threadId AND type = 'STATE_SNAPSHOT'
       AND (@before IS NULL OR seq < @before) AND (@runId IS NULL OR run_id = @runId)
     ORDER BY seq DESC LIMIT 1`,
  )
  const origin = db.prepare<[string], { parent_thread_id: string; at_json: string }>(
    'SELECT parent_thread_id, at_json FROM thread_forks WHERE thread_id = ?',
  )
  const children = db.prepare<[string, number], { thread_id: string; at_json: string; created_at: number }>(
    'SELECT thread_id, at_json, created_at FROM thread_forks WHERE parent_thread_id = ? ORDER BY created_at, thread_id LIMIT ?',
  )
  const write = prepareForkWrite(db)
  const message = (row: MessageRow | undefined): ForkMessage | undefined =>
    row && { position: row.position, runId: row.run_id ?? undefined, message: JSON.parse(row.json) as Message }
  return {
    getForkMessage: async (threadId, at) =>
      message('messageId' in at ? byId.get(threadId, at.messageId) : byPosition.get(threadId, at.position)),
    getBatchOfRun: async (threadId, runId): Promise<PausedBatch | undefined> => {
      const row = batchOfRun.get(threadId, runId)
      if (!row) return undefined
      const batch = toBatch(row, interrupts.all(row.batch_id))
      const pause =
        row.pause_message_count === null
          ? undefined
          : {
              messageCount: Number(row.pause_message_count),
              checkpoints: JSON.parse(row.pause_checkpoints ?? '{}') as Record<string, string>,
            }
      return { batch, pause }
    },
    listUnansweredCalls: async (threadId, last) => unanswered.all({ threadId, last }).map(toToolCall),
    getLastStateSnapshot: async (threadId, query) =>
      lastState.get({ threadId, before: query.beforeSeq ?? null, runId: query.runId ?? null })?.json,
    createFork: async (fork) => writeTransaction(db, () => write(fork)),
    getForkOrigin: async (threadId): Promise<ForkOrigin | undefined> => {
      const row = origin.get(threadId)
      return row && { parentThreadId: row.parent_thread_id, at: JSON.parse(row.at_json) as ForkPoint }
    },
    listForks: async (parentThreadId, limit): Promise<ForkChild[]> =>
      children.all(parentThreadId, limit).map((row) => ({
        threadId: row.thread_id,
        at: JSON.parse(row.at_json) as ForkPoint,
        createdAt: Number(row.created_at),
      })),
  }
}

/** The fork's one write transaction: thread, copied prefix, ledger, checkpoints, the paused batch, its origin. */
function prepareForkWrite(db: Database.Database): (fork: NewFork) => boolean {
  const insertThread = db.prepare(
    `INSERT INTO threads (thread_id, owner_id, revision, status, state_json, active_run_id, last_seq, created_at, updated_at, title)
     VALUES (@threadId, @ownerId, 1, @status, @stateJson, NULL, 0, @now, @now, @title) ON CONFLICT DO NOTHING`,
  )
  const copyMessages = db.prepare(
    `INSERT INTO messages (thread_id, position, message_id, role, run_id, json, created_at)
     SELECT @threadId, position, message_id, role, run_id, json, created_at FROM messages
     WHERE thread_id = @parentThreadId AND position <= @last`,
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
  const insertOrigin = db.prepare(
    'INSERT INTO thread_forks (thread_id, parent_thread_id, at_json, created_at) VALUES (?, ?, ?, ?)',
  )
  return (fork) => {
    const { threadId, now } = fork
    const status = fork.batch ? 'interrupted' : 'idle'
    const created = insertThread.run({ ...fork, status, title: fork.title ?? null })
    if (created.changes === 0) return false
    copyMessages.run({ threadId, parentThreadId: fork.parentThreadId, last: fork.lastPosition })
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
    insertOrigin.run(threadId, fork.parentThreadId, JSON.stringify(fork.at), now)
    return true
  }
}
