import type { SaveToolCheckpoint, ToolCheckpointRow } from '../tool-checkpoints.ts'
import type { Queryable } from './query.ts'
import { fenced, statement } from './query.ts'
import { bumpIfActive, lockIfActive } from './statements.ts'

/** The PostgreSQL side of per-call checkpoints (`../tool-checkpoints.ts`). */

export async function getToolCheckpoint(
  q: Queryable,
  threadId: string,
  toolCallId: string,
): Promise<string | undefined> {
  const { rows } = await q.query<ToolCheckpointRow>(
    'SELECT json FROM tool_checkpoints WHERE thread_id = $1 AND tool_call_id = $2',
    [threadId, toolCallId],
  )
  return rows[0]?.json
}

/** Inside a transaction: fenced by the thread row's lock (the run must be the active one). */
export async function saveToolCheckpointTx(q: Queryable, request: SaveToolCheckpoint): Promise<void> {
  const { threadId, runId, toolCallId, json, stateJson, now } = request
  // With a state: the fence writes it (revision +1), as a settlement's does.
  const fence =
    stateJson !== undefined ? bumpIfActive(threadId, runId, now, { json: stateJson }) : lockIfActive(threadId, runId)
  await fenced(q, fence, threadId, runId)
  await q.query(
    statement(
      `INSERT INTO tool_checkpoints (thread_id, tool_call_id, json, updated_at) VALUES ($1, $2, $3, $4)
       ON CONFLICT (thread_id, tool_call_id) DO UPDATE SET json = excluded.json, updated_at = excluded.updated_at`,
      [threadId, toolCallId, json, now],
    ),
  )
}
