import type { BatchRecord, NewBatch } from '../store.ts'
import type { BatchRow } from '../rows.ts'
import { toBatch } from '../rows.ts'
import { fenceTx } from './appends.ts'
import { insertOutboxTx } from './outbox.ts'
import type { SqliteStatements } from './statements.ts'

/** A thread's interrupt batches in the SQLite store: the open one, the one of an interrupt, and writing a new one. */

/** The batch of `row` with its interrupts, in order. */
export function batchOf(s: SqliteStatements, row: BatchRow): BatchRecord {
  return toBatch(row, s.listInterrupts.all(row.batch_id))
}

export function getOpenBatch(s: SqliteStatements, threadId: string): BatchRecord | undefined {
  const row = s.getOpenBatch.get(threadId)
  return row ? batchOf(s, row) : undefined
}

export function getBatchOfInterrupt(
  s: SqliteStatements,
  threadId: string,
  interruptId: string,
): BatchRecord | undefined {
  const row = s.getBatchOfInterrupt.get(interruptId, threadId)
  return row ? batchOf(s, row) : undefined
}

/** Fenced, inside the caller's write transaction: the batch, its interrupts, the thread interrupted, its webhooks. */
export function createBatchTx(s: SqliteStatements, batch: NewBatch): void {
  const { batchId, threadId, runId } = batch
  fenceTx(s, threadId, runId)
  const callIdsJson = JSON.stringify([...new Set(batch.interrupts.map((i) => i.toolCallId))])
  s.insertBatch.run({ ...batch, callIdsJson })
  batch.interrupts.forEach((item, position) => {
    const json = JSON.stringify(item.interrupt)
    s.insertInterrupt.run({ ...item, interruptId: item.interrupt.id, batchId, threadId, position, json })
  })
  s.markInterrupted.run({ threadId, now: batch.createdAt })
  insertOutboxTx(s, batch.outbox, batch.createdAt)
}
