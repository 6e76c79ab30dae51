import type { BatchRecord, NewBatch } from '../store.ts'
import { toBatch } from '../rows.ts'
import { insertOutboxTx } from './outbox.ts'
import type { Queryable } from './query.ts'
import { fenced, rows } from './query.ts'
import * as sql from './statements.ts'

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
  await q.query(sql.insertBatch(batch))
  await q.query(sql.insertInterrupts(batch))
  await insertOutboxTx(q, batch.outbox, batch.createdAt)
}
