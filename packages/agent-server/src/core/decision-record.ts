import type { DecisionRecord, DecisionVia, ResumeEntry } from '@interlude/protocol'
import type { BatchRecord, Store } from '../store/store.ts'

/**
 * The record a claim stores, built where the claim is made so the webhook reporting it carries the same
 * (docs/approvals.md#decision-records): a person's resume, a decision through the API, or the expiry sweep.
 */
export function decisionRecord(
  batch: BatchRecord,
  decision: {
    readonly runId: string
    readonly entries: readonly ResumeEntry[]
    readonly decidedBy: string
    readonly via: DecisionVia
    readonly now: number
  },
): DecisionRecord {
  const { runId, entries, decidedBy, via, now } = decision
  return {
    threadId: batch.threadId,
    runId,
    // The batch's public id: the run that paused with it (docs/time-travel.md).
    batchId: batch.runId,
    interruptIds: batch.interrupts.map((i) => i.interrupt.id),
    entries,
    decidedBy,
    via,
    at: new Date(now).toISOString(),
  }
}

/**
 * The records of the batch `batchRunId` (its public id) that an organisation policy counts: votes and escalations,
 * oldest first (docs/approvals.md#organisation-policies).
 */
export function voteRecords(decisions: readonly DecisionRecord[], batchRunId: string): DecisionRecord[] {
  return decisions.filter((d) => d.batchId === batchRunId && d.stage !== undefined)
}

/** The records of the batch a deciding vote settled that came before it (the votes so far, an escalation). */
export async function earlierVotes(
  store: Pick<Store, 'listDecisions'>,
  deciding: DecisionRecord,
): Promise<DecisionRecord[]> {
  if (deciding.batchId === undefined) return []
  const all = voteRecords(await store.listDecisions(deciding.threadId), deciding.batchId)
  return all.filter((r) => r.runId !== deciding.runId)
}
