import { SYSTEM_ESCALATION_PRINCIPAL } from '@interlude/protocol'
import type { DecisionRecord, ResumeEntry, VoteTally } from '@interlude/protocol'
import type { StoredInterrupt } from '../../store/store.ts'
import type { VotePolicy } from './vote-policy.ts'
import { stageAt } from './vote-policy.ts'

/**
 * Where the votes on an open batch stand (docs/approvals.md#organisation-policies), from its records alone, so every
 * replica counts the same: per interrupt, the stage that decides it now, its approvals so far, who voted, and — once
 * settled — the entry that carries it out (any denial, or the approval that completed the last stage).
 */
export interface InterruptState {
  readonly interruptId: string
  readonly policy: VotePolicy
  readonly stage: number
  readonly approvals: number
  /** Everybody who voted on it (a voter never votes twice on one interrupt, whatever the stage). */
  readonly voters: ReadonlySet<string>
  readonly settled?: ResumeEntry
}

export interface BatchTally {
  readonly interrupts: readonly InterruptState[]
  /** The batch's vote records (votes and escalations), oldest first: their count conditions every write. */
  readonly records: readonly DecisionRecord[]
  readonly escalated: boolean
}

const approves = (entry: ResumeEntry) =>
  entry.status === 'resolved' && (entry.payload as { approved?: unknown } | undefined)?.approved === true

export function tallyBatch(
  interrupts: readonly StoredInterrupt[],
  policyOf: (item: StoredInterrupt) => VotePolicy,
  records: readonly DecisionRecord[],
): BatchTally {
  const escalation = records.findLastIndex((r) => r.decidedBy === SYSTEM_ESCALATION_PRINCIPAL && r.vote !== true)
  const states = interrupts.map((item): InterruptState => {
    const policy = policyOf(item)
    const id = item.interrupt.id
    const escalates = escalation >= 0 && policy.escalate !== undefined
    let stage = escalates ? policy.stages.length : 0
    let approvals = 0
    let settled: ResumeEntry | undefined
    const voters = new Set<string>()
    records.forEach((record, index) => {
      if (record.vote !== true) return
      const entry = record.entries.find((e) => e.interruptId === id)
      if (entry === undefined) return
      voters.add(record.decidedBy)
      // Votes before an escalation count no more: the right to decide moved on.
      if (settled !== undefined || (escalates && index < escalation)) return
      if (!approves(entry)) {
        settled = entry
        return
      }
      // An approval counts towards the stage the interrupt was in when it was cast: the order of the records says
      // which (a vote on several interrupts carries one `stage`, the first one's).
      approvals += 1
      if (approvals < stageAt(policy, stage).quorum) return
      const last = escalates || stage === policy.stages.length - 1
      if (last) settled = entry
      else {
        stage += 1
        approvals = 0
      }
    })
    return { interruptId: id, policy, stage, approvals, voters, ...(settled ? { settled } : {}) }
  })
  return { interrupts: states, records, escalated: escalation >= 0 }
}

/** What each still open interrupt needs (the `202` answer of a vote that did not settle its batch). */
export function pendingTallies(tally: BatchTally): VoteTally[] {
  return tally.interrupts
    .filter((i) => i.settled === undefined)
    .map((i) => ({
      interruptId: i.interruptId,
      stage: i.stage,
      approvals: i.approvals,
      quorum: stageAt(i.policy, i.stage).quorum,
    }))
}
