import type Database from 'better-sqlite3'
import type { ForkPoint, Message } from '@interlude/protocol'
import type { ForkChild, ForkMessage, ForkOrigin, ForkStore, PausedBatch } from '../forks.ts'
import type { BatchRow, InterruptRow, ToolCallRow } from '../rows.ts'
import { toBatch, toToolCall } from '../rows.ts'
import { prepareForkWrite } from './fork-write.ts'

type MessageRow = { position: number; run_id: string | null; json: string }
type PausedRow = BatchRow & { pause_message_count: number | null; pause_checkpoints: string | null }

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
    `SELECT parent_thread_id, at_json FROM thread_forks f WHERE thread_id = ?
       AND EXISTS (SELECT 1 FROM threads t WHERE t.thread_id = f.thread_id)`,
  )
  const children = db.prepare<[string, number], { thread_id: string; at_json: string; created_at: number }>(
    `SELECT thread_id, at_json, created_at FROM thread_forks f WHERE parent_thread_id = ?
       AND EXISTS (SELECT 1 FROM threads t WHERE t.thread_id = f.thread_id)
     ORDER BY created_at, thread_id LIMIT ?`,
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
    createFork: (fork) => write(fork),
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
