import type { BatchRecord, NewBatch } from '../store.ts'
import { toBatch } from '../rows.ts'
import { insertOutboxTx } from './outbox.ts'
import type { Queryable } from './query.ts'
import { fenced, rows, statement } from './query.ts'
import * as sql from './statements.ts'
import { OPEN_BATCH_STATUS } from '../statuses.ts'
import { sqlString } from '../sql-literals.ts'

const OPEN_BATCH = sqlString(OPEN_BATCH_STATUS)

/** A thread's interrupt batches in the PostgreSQL store: the open one, the one of an interrupt, and writing a new one. */

export async function getOpenBatch(q: Queryable, threadId: string): Promise<BatchRecord | undefined> {
  const row = (await rows(q, sql.getOpenBatch(threadId)))[0]
  return row ? toBatch(row, row.interrupts) : undefined
}

export async function getBatchOfInterrupt(
  q: Queryable,
  threadId: string,
  interruptId: string,
): Promise<BatchRecord | undefined> {
  const row = (await rows(q, sql.getBatchOfInterrupt(threadId, interruptId)))[0]
  return row ? toBatch(row, row.interrupts) : undefined
}

/** Inside a transaction, fenced: the thread interrupted, the batch, its interrupts, its webhooks. */
export async function createBatchTx(q: Queryable, batch: NewBatch): Promise<void> {
  await fenced(q, sql.interruptIfActive(batch.threadId, batch.runId, batch.createdAt), batch.threadId, batch.runId)
  await q.query(insertBatch(batch))
  await q.query(sql.insertInterrupts(batch))
  await insertOutboxTx(q, batch.outbox, batch.createdAt)
}

/** With what the pause holds (docs/time-travel.md): the messages so far, the checkpoints of the batch's calls. */
const insertBatch = (batch: NewBatch) =>
  statement(
    `INSERT INTO interrupt_batches (batch_id, thread_id, run_id, status, created_at, expires_at, on_expiry,
       pause_message_count, pause_checkpoints)
     VALUES ($1, $2, $3, ${OPEN_BATCH}, $4, $5, $6,
       (SELECT message_count FROM threads WHERE thread_id = $2),
       (SELECT COALESCE(json_object_agg(tool_call_id, json)::text, '{}') FROM tool_checkpoints
        WHERE thread_id = $2 AND tool_call_id = ANY($7::text[])))`,
    [
      batch.batchId,
      batch.threadId,
      batch.runId,
      batch.createdAt,
      batch.expiresAt,
      batch.onExpiry,
      [...new Set(batch.interrupts.map((i) => i.toolCallId))],
    ],
  )
