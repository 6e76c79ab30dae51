import type { DecisionRecord } from '@interlude/protocol'
import type { BatchRecord, DueBatchQuery, PendingBatchQuery, PendingBatchRecord } from '../store.ts'
import { toBatch, toDecision, toPendingBatch } from '../rows.ts'
import * as sql from './approval-statements.ts'
import type { Queryable } from './query.ts'
import { rows } from './query.ts'

/**
 * What approvals from anywhere read (docs/approvals.md): decision records, and batches across threads
 * — the cross-owner inbox and the expiry sweep, each one query whose rows carry their interrupts as
 * JSON, so a page costs no lookup per batch.
 */

export async function listDecisions(q: Queryable, threadId: string): Promise<DecisionRecord[]> {
  return (await rows(q, sql.listDecisions(threadId))).map(toDecision)
}

export async function getDecision(q: Queryable, threadId: string, runId: string): Promise<DecisionRecord | undefined> {
  const row = (await rows(q, sql.getDecision(threadId, runId)))[0]
  return row ? toDecision(row) : undefined
}

export async function listPendingBatches(q: Queryable, query: PendingBatchQuery): Promise<PendingBatchRecord[]> {
  return (await rows(q, sql.listPendingBatches(query))).map((row) => toPendingBatch(row, row.interrupts))
}

export async function listDueBatches(q: Queryable, query: DueBatchQuery): Promise<BatchRecord[]> {
  return (await rows(q, sql.listDueBatches(query))).map((row) => toBatch(row, row.interrupts))
}
