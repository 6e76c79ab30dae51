import type pg from 'pg'
import type { ForkPoint, Message } from '@interlude/protocol'
import type { ForkStore, NewFork, PausedBatch } from '../forks.ts'
import type { BatchRow, InterruptRow, ToolCallRow } from '../rows.ts'
import { toBatch, toToolCall } from '../rows.ts'
import { TERMINAL_CALL_STATUSES } from '../statuses.ts'
import { sqlList } from '../sql-literals.ts'
import type { Queryable } from './query.ts'
import { transaction } from './transaction.ts'

type MessageRow = { position: number; run_id: string | null; json: string }
type PausedRow = BatchRow & {
  pause_message_count: string | number | null
  pause_checkpoints: string | null
  interrupts: InterruptRow[]
}

const TERMINAL = sqlList(TERMINAL_CALL_STATUSES)

/** The PostgreSQL side of thread forks (`../forks.ts`); the same statements as SQLite's, in this dialect. */
export function postgresForks(pool: pg.Pool): ForkStore {
  const one = async <Row extends pg.QueryResultRow>(text: string, values: unknown[]) =>
    (await pool.query<Row>(text, values)).rows[0]
  return {
    getForkMessage: async (threadId, at) => {
      const row = await one<MessageRow>(
        `SELECT position, run_id, json FROM messages WHERE thread_id = $1 AND ${'messageId' in at ? 'message_id' : 'position'} = $2`,
        [threadId, 'messageId' in at ? at.messageId : at.position],
      )
      return (
        row && {
          position: Number(row.position),
          runId: row.run_id ?? undefined,
          message: JSON.parse(row.json) as Message,
        }
      )
    },
    getBatchOfRun: async (threadId, runId): Promise<PausedBatch | undefined> => {
      const row = await one<PausedRow>(
        `SELECT b.*, COALESCE((SELECT json_agg(i ORDER BY i.position) FROM
           (SELECT interrupt_id, kind, tool_call_id, tool_name, json, position FROM interrupts WHERE batch_id = b.batch_id) i),
           '[]'::json) AS interrupts
         FROM interrupt_batches b WHERE b.thread_id = $1 AND b.run_id = $2 ORDER BY b.created_at DESC LIMIT 1`,
        [threadId, runId],
      )
      if (!row) return undefined
      const pause =
        row.pause_message_count === null
          ? undefined
          : {
              messageCount: Number(row.pause_message_count),
              checkpoints: JSON.parse(row.pause_checkpoints ?? '{}') as Record<string, string>,
            }
      return { batch: toBatch(row, row.interrupts), pause }
    },
    listUnansweredCalls: async (threadId, last) => {
      const { rows } = await pool.query<ToolCallRow>(
        `WITH answered AS (
           SELECT json::jsonb ->> 'toolCallId' AS id FROM messages
           WHERE thread_id = $1 AND position <= $2 AND role = 'tool')
         SELECT tc.* FROM tool_calls tc JOIN messages m ON m.thread_id = tc.thread_id AND m.message_id = tc.message_id
         WHERE tc.thread_id = $1 AND m.position <= $2
           AND tc.tool_call_id NOT IN (SELECT id FROM answered WHERE id IS NOT NULL)
         ORDER BY m.position, tc.created_at`,
        [threadId, last],
      )
      return rows.map(toToolCall)
    },
    getLastStateSnapshot: async (threadId, query) =>
      (
        await one<{ json: string }>(
          `SELECT json FROM events WHERE thread_id = $1 AND type = 'STATE_SNAPSHOT'
             AND ($2::bigint IS NULL OR seq < $2) AND ($3::text IS NULL OR run_id = $3)
           ORDER BY seq DESC LIMIT 1`,
          [threadId, query.beforeSeq ?? null, query.runId ?? null],
        )
      )?.json,
    createFork: (fork) => transaction(pool, (q) => writeFork(q, fork)),
    getForkOrigin: async (threadId) => {
      const row = await one<{ parent_thread_id: string; at_json: string }>(
        'SELECT parent_thread_id, at_json FROM thread_forks WHERE thread_id = $1',
        [threadId],
      )
      return row && { parentThreadId: row.parent_thread_id, at: JSON.parse(row.at_json) as ForkPoint }
    },
    listForks: async (parentThreadId, limit) => {
      const { rows } = await pool.query<{ thread_id: string; at_json: string; created_at: string }>(
        'SELECT thread_id, at_json, created_at FROM thread_forks WHERE parent_thread_id = $1 ORDER BY created_at, thread_id LIMIT $2',
        [parentThreadId, limit],
      )
      return rows.map((r) => ({
        threadId: r.thread_id,
        at: JSON.parse(r.at_json) as ForkPoint,
        createdAt: Number(r.created_at),
      }))
    },
  }
}

/**
 * The fork's one transaction (`../forks.ts`): the new thread row first (the only row it locks), then the prefix copied
 * set-based from the parent, whose rows it only reads (MVCC: the parent's writers never wait for it).
 */
async function writeFork(q: Queryable, fork: NewFork): Promise<boolean> {
  const { threadId, now, parentThreadId, lastPosition: last } = fork
  const created = await q.query(
    `INSERT INTO threads (thread_id, owner_id, revision, status, state_json, active_run_id, last_seq, created_at, updated_at, title)
     VALUES ($1, $2, 1, $3, $4, NULL, 0, $5, $5, $6) ON CONFLICT DO NOTHING`,
    [threadId, fork.ownerId, fork.batch ? 'interrupted' : 'idle', fork.stateJson, now, fork.title ?? null],
  )
  if (created.rowCount === 0) return false
  await q.query(
    `INSERT INTO messages (thread_id, position, message_id, role, run_id, json, created_at)
     SELECT $1, position, message_id, role, run_id, json, created_at FROM messages WHERE thread_id = $2 AND position <= $3`,
    [threadId, parentThreadId, last],
  )
  for (const m of fork.replaced) {
    await q.query('UPDATE messages SET json = $3 WHERE thread_id = $1 AND message_id = $2', [
      threadId,
      m.id,
      JSON.stringify(m),
    ])
  }
  for (const [i, m] of fork.appended.entries()) {
    await q.query(
      `INSERT INTO messages (thread_id, position, message_id, role, run_id, json, created_at)
       VALUES ($1, $2, $3, $4, NULL, $5, $6)`,
      [threadId, last + 1 + i, m.id, m.role, JSON.stringify(m), now],
    )
  }
  await q.query(
    `UPDATE threads SET (message_count, message_bytes) =
       (SELECT COUNT(*), COALESCE(SUM(octet_length(json)), 0) FROM messages WHERE thread_id = $1)
     WHERE thread_id = $1`,
    [threadId],
  )
  // Settled calls come along as they are (`started` ones as `unknown`: never run again); the others are cancelled.
  await q.query(
    `INSERT INTO tool_calls (thread_id, tool_call_id, run_id, message_id, tool_name, args_text, kind, status, result,
       attempt_run_id, created_at, started_at, finished_at)
     SELECT $1, tc.tool_call_id, tc.run_id, tc.message_id, tc.tool_name, tc.args_text, tc.kind,
       CASE WHEN tc.tool_call_id = ANY($4::text[]) THEN 'cancelled'
            WHEN tc.status = 'started' THEN 'unknown' WHEN tc.status IN ${TERMINAL} THEN tc.status ELSE 'cancelled' END,
       CASE WHEN tc.tool_call_id = ANY($4::text[]) THEN $5 ELSE tc.result END,
       tc.attempt_run_id, tc.created_at, tc.started_at, COALESCE(tc.finished_at, $7)
     FROM tool_calls tc JOIN messages m ON m.thread_id = tc.thread_id AND m.message_id = tc.message_id
     WHERE tc.thread_id = $2 AND m.position <= $3 AND NOT (tc.tool_call_id = ANY($6::text[]))`,
    [
      threadId,
      parentThreadId,
      last,
      [...fork.cancelled.toolCallIds],
      fork.cancelled.result,
      [...fork.skipCallIds],
      now,
    ],
  )
  for (const c of fork.calls) {
    await q.query(
      `INSERT INTO tool_calls (thread_id, tool_call_id, run_id, message_id, tool_name, args_text, kind, status, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      [threadId, c.toolCallId, c.runId, c.messageId, c.toolName, c.argsText, c.kind, c.status, now],
    )
  }
  for (const [id, json] of Object.entries(fork.checkpoints)) {
    await q.query('INSERT INTO tool_checkpoints (thread_id, tool_call_id, json, updated_at) VALUES ($1, $2, $3, $4)', [
      threadId,
      id,
      json,
      now,
    ])
  }
  if (fork.batch) await writeBatch(q, fork, fork.batch)
  await q.query('INSERT INTO thread_forks (thread_id, parent_thread_id, at_json, created_at) VALUES ($1, $2, $3, $4)', [
    threadId,
    parentThreadId,
    JSON.stringify(fork.at),
    now,
  ])
  return true
}

/** The paused run and its batch, open again with new interrupt ids. */
async function writeBatch(q: Queryable, fork: NewFork, batch: NonNullable<NewFork['batch']>): Promise<void> {
  const { threadId, now } = fork
  await q.query(
    `INSERT INTO runs (thread_id, run_id, kind, status, outcome_json, created_at, finished_at)
     VALUES ($1, $2, 'input', 'interrupted', $3, $4, $4)`,
    [threadId, batch.runId, batch.outcomeJson, now],
  )
  await q.query(
    `INSERT INTO interrupt_batches (batch_id, thread_id, run_id, status, created_at, expires_at, on_expiry,
       pause_message_count, pause_checkpoints)
     VALUES ($1, $2, $3, 'pending', $4, $5, $6, (SELECT message_count FROM threads WHERE thread_id = $2), $7)`,
    [batch.batchId, threadId, batch.runId, now, batch.expiresAt, batch.onExpiry, JSON.stringify(fork.checkpoints)],
  )
  for (const [position, item] of batch.interrupts.entries()) {
    await q.query(
      `INSERT INTO interrupts (interrupt_id, batch_id, thread_id, position, kind, tool_call_id, tool_name, json)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [
        item.interrupt.id,
        batch.batchId,
        threadId,
        position,
        item.kind,
        item.toolCallId,
        item.toolName,
        JSON.stringify(item.interrupt),
      ],
    )
  }
}
