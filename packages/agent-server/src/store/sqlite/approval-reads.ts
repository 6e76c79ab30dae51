import type { DecisionRecord } from '@interlude/protocol'
import type { BatchRecord, DueBatchQuery, PendingBatchQuery, PendingBatchRecord } from '../store.ts'
import type { BatchRow, InterruptRow } from '../rows.ts'
import { toBatch, toDecision, toPendingBatch } from '../rows.ts'
import type { SqliteStatements, WithInterruptsJson } from './statements.ts'

/**
 * What approvals from anywhere read (docs/approvals.md): decision records, and batches across threads
 * — the cross-owner inbox and the expiry sweep, each one query whose rows carry their interrupts as
 * JSON, so a page costs no lookup per batch.
 */

export function listDecisions(s: SqliteStatements, threadId: string): DecisionRecord[] {
  return s.listDecisions.all(threadId).map(toDecision)
}

export function getDecision(s: SqliteStatements, threadId: string, runId: string): DecisionRecord | undefined {
  const row = s.getDecision.get(threadId, runId)
  return row ? toDecision(row) : undefined
}

export function listPendingBatches(s: SqliteStatements, query: PendingBatchQuery): PendingBatchRecord[] {
  const { before, limit } = query
  const owner = query.owner ?? null
  const page = { beforeCreated: before?.createdAt ?? null, beforeBatch: before?.batchId ?? null, limit, owner }
  return s.listPendingBatches.all(page).map((row) => toPendingBatch(row, interruptsOf(row)))
}

export function listDueBatches(s: SqliteStatements, query: DueBatchQuery): BatchRecord[] {
  return s.listDueBatches.all({ now: query.now, limit: query.limit }).map((row) => toBatch(row, interruptsOf(row)))
}

function interruptsOf(row: WithInterruptsJson<BatchRow>): InterruptRow[] {
  return JSON.parse(row.interrupts_json) as InterruptRow[]
}
