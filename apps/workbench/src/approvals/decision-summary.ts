import type { DecisionRecord, VoteTally } from '@interlude/protocol'
import {
  DECISION_EVENT_NAME,
  DECISION_VIAS,
  SYSTEM_ESCALATION_PRINCIPAL,
  SYSTEM_EXPIRY_PRINCIPAL,
} from '@interlude/protocol'

/**
 * The audit line of one decision record (docs/approvals.md#decision-records), e.g.
 * "Approved by mgr via api at 10:32". Cancelled is cancelled, never "denied": a cancelled entry carries no
 * answer at all, a denial is an answer.
 */
export type DecisionVerdict = 'approved' | 'denied' | 'cancelled' | 'answered' | 'mixed'

const VERDICT_LABEL: Record<DecisionVerdict, string> = {
  approved: 'Approved',
  denied: 'Denied',
  cancelled: 'Cancelled',
  answered: 'Answered',
  mixed: 'Answered',
}

export type EntryVerdict = 'approved' | 'denied' | 'cancelled' | 'answered'

/** One entry's meaning: an approval's `approved`, a cancelled entry, or any other answer (a question). */
export function entryVerdict(entry: { readonly status: string; readonly payload?: unknown }): EntryVerdict {
  if (entry.status === 'cancelled') return 'cancelled'
  const payload = entry.payload
  if (typeof payload === 'object' && payload !== null && 'approved' in payload) {
    const approved = (payload as { approved?: unknown }).approved
    if (approved === true) return 'approved'
    if (approved === false) return 'denied'
  }
  return 'answered'
}

export function decisionVerdict(record: Pick<DecisionRecord, 'entries'>): DecisionVerdict {
  const verdicts = new Set(record.entries.map(entryVerdict))
  if (verdicts.size === 0) return 'answered'
  if (verdicts.size === 1) return [...verdicts][0]!
  return 'mixed'
}

/** "mgr", or "the deadline" for the expiry sweeper. */
export function deciderLabel(decidedBy: string): string {
  return decidedBy === SYSTEM_EXPIRY_PRINCIPAL ? 'the deadline' : decidedBy
}

export interface DecisionSummaryOptions {
  /** Formats the record's time; by default the local time of day (hours and minutes). */
  readonly formatTime?: (at: Date) => string
}

const defaultTime = (at: Date): string => at.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' })

/**
 * "Approved by mgr via api at 10:32"; a mixed batch adds its counts ("Answered (1 approved, 1 denied) by …"), a vote
 * under an organisation policy says so ("Approved (vote, stage 2) by …"), and an escalation says where the right to
 * decide went (docs/approvals.md#organisation-policies).
 */
export function decisionSummary(record: DecisionRecord, options: DecisionSummaryOptions = {}): string {
  const at = new Date(record.at)
  const time = Number.isFinite(at.getTime()) ? (options.formatTime ?? defaultTime)(at) : record.at
  if (record.decidedBy === SYSTEM_ESCALATION_PRINCIPAL) return `Escalated to the next deciders at ${time}`
  const verdict = decisionVerdict(record)
  let head = VERDICT_LABEL[verdict]
  if (verdict === 'mixed') {
    const counts = new Map<EntryVerdict, number>()
    for (const entry of record.entries) counts.set(entryVerdict(entry), (counts.get(entryVerdict(entry)) ?? 0) + 1)
    head += ` (${[...counts].map(([v, n]) => `${n} ${v}`).join(', ')})`
  }
  if (record.vote === true) head += record.stage ? ` (vote, stage ${record.stage + 1})` : ' (vote)'
  // docs/approvals.md#stale-approvals: an approval that found the world changed ran nothing and was asked again.
  const stale = record.outcome === 'stale' ? ' — stale: nothing ran, asked again' : ''
  return `${head} by ${deciderLabel(record.decidedBy)} via ${record.via} at ${time}${stale}`
}

/** Structural check of a record from the wire (a snapshot, a CUSTOM event, a recording). */
export function isDecisionRecord(value: unknown): value is DecisionRecord {
  if (typeof value !== 'object' || value === null) return false
  const r = value as Record<string, unknown>
  return (
    typeof r.threadId === 'string' &&
    typeof r.runId === 'string' &&
    typeof r.decidedBy === 'string' &&
    typeof r.at === 'string' &&
    (DECISION_VIAS as readonly unknown[]).includes(r.via) &&
    Array.isArray(r.interruptIds) &&
    Array.isArray(r.entries) &&
    r.entries.every(
      (e) => typeof e === 'object' && e !== null && typeof (e as { status?: unknown }).status === 'string',
    )
  )
}

/** The record of a `CUSTOM { name: "interlude.decision" }` event, else `undefined`. */
export function decisionFromEvent(event: unknown): DecisionRecord | undefined {
  if (typeof event !== 'object' || event === null) return undefined
  const e = event as { type?: unknown; name?: unknown; value?: unknown }
  return e.type === 'CUSTOM' && e.name === DECISION_EVENT_NAME && isDecisionRecord(e.value) ? e.value : undefined
}

/** Merges records, one per `runId` (a record is never rewritten), oldest first. */
export function mergeDecisions(
  ...lists: readonly (readonly DecisionRecord[] | undefined)[]
): readonly DecisionRecord[] {
  const byRun = new Map<string, DecisionRecord>()
  for (const list of lists)
    for (const record of list ?? []) if (!byRun.has(record.runId)) byRun.set(record.runId, record)
  return [...byRun.values()].sort((a, b) => Date.parse(a.at) - Date.parse(b.at))
}

/**
 * What a batch under an organisation policy still needs, from its `votes` (the inbox row, or a vote's `202` answer):
 * "1 of 2 approvals", "0 of 1 approval in stage 2". Interrupts that one answer decides (beside a deploy that needs
 * two, say) are left out; interrupts that need different things are listed apart.
 */
export function votesText(votes: readonly VoteTally[]): string {
  const counted = votes.filter((v) => v.quorum > 1 || v.stage > 0)
  const texts = (counted.length > 0 ? counted : votes).map(
    (v) =>
      `${v.approvals} of ${v.quorum} ${v.quorum === 1 ? 'approval' : 'approvals'}${v.stage > 0 ? ` in stage ${v.stage + 1}` : ''}`,
  )
  return [...new Set(texts)].join('; ')
}
