import type Database from 'better-sqlite3'
import type { SaveToolCheckpoint, ToolCheckpointRow } from '../tool-checkpoints.ts'

/** The SQLite statements of per-call checkpoints (`../tool-checkpoints.ts`). */
export function prepareToolCheckpoints(db: Database.Database) {
  const get = db.prepare<[string, string], ToolCheckpointRow>(
    'SELECT json FROM tool_checkpoints WHERE thread_id = ? AND tool_call_id = ?',
  )
  const put = db.prepare<Omit<SaveToolCheckpoint, 'runId'>>(
    `INSERT INTO tool_checkpoints (thread_id, tool_call_id, json, updated_at) VALUES (@threadId, @toolCallId, @json, @now)
     ON CONFLICT (thread_id, tool_call_id) DO UPDATE SET json = excluded.json, updated_at = excluded.updated_at`,
  )
  return {
    get(threadId: string, toolCallId: string): string | undefined {
      return get.get(threadId, toolCallId)?.json
    },
    /** Call inside the write transaction, after the fence. */
    put(request: SaveToolCheckpoint): void {
      put.run({ threadId: request.threadId, toolCallId: request.toolCallId, json: request.json, now: request.now })
    },
  }
}
