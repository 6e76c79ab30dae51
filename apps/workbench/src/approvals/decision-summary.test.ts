import type { DecisionRecord } from '@interlude/protocol'
import { describe, expect, it } from 'vitest'
import {
  decisionFromEvent,
  decisionSummary,
  decisionVerdict,
  entryVerdict,
  isDecisionRecord,
  mergeDecisions,
  votesText,
} from './decision-summary.ts'

const record = (overrides: Partial<DecisionRecord> = {}): DecisionRecord => ({
  threadId: 't1',
  runId: 'run_1',
  interruptIds: ['i1', 'i2'],
  entries: [
    { interruptId: 'i1', status: 'resolved', payload: { approved: true } },
    { interruptId: 'i2', status: 'resolved', payload: { approved: true, reason: 'change window' } },
  ],
  decidedBy: 'mgr',
  via: 'api',
  at: '2026-11-30T10:32:00.000Z',
  ...overrides,
})
const hhmm = (at: Date) => at.toISOString().slice(11, 16)

describe('decision summaries (the audit line)', () => {
  it('says who approved, through which channel, and when', () => {
    expect(decisionSummary(record(), { formatTime: hhmm })).toBe('Approved by mgr via api at 10:32')
  })

  it('says a vote is a vote (with its stage in a chain) and where an escalation moved the right to decide', () => {
    expect(decisionSummary(record({ vote: true, stage: 0 }), { formatTime: hhmm })).toBe(
      'Approved (vote) by mgr via api at 10:32',
    )
    expect(decisionSummary(record({ vote: true, stage: 1, via: 'slack' }), { formatTime: hhmm })).toBe(
      'Approved (vote, stage 2) by mgr via slack at 10:32',
    )
    const escalation = record({ decidedBy: 'system:escalation', via: 'expiry', entries: [], stage: 2 })
    expect(decisionSummary(escalation, { formatTime: hhmm })).toBe('Escalated to the next deciders at 10:32')
  })

  it("says what a batch's votes still need, once per different need", () => {
    const tally = (interruptId: string, stage: number, approvals: number, quorum: number) => ({
      interruptId,
      stage,
      approvals,
      quorum,
    })
    expect(votesText([tally('i1', 0, 1, 2)])).toBe('1 of 2 approvals')
    expect(votesText([tally('i1', 0, 1, 2), tally('i2', 0, 1, 2)])).toBe('1 of 2 approvals')
    expect(votesText([tally('i1', 1, 0, 1), tally('i2', 0, 1, 3)])).toBe('0 of 1 approval in stage 2; 1 of 3 approvals')
    // A call one answer decides, beside one that counts votes, is left out; alone, it is said.
    expect(votesText([tally('i1', 0, 0, 1), tally('i2', 0, 0, 2)])).toBe('0 of 2 approvals')
    expect(votesText([tally('i1', 0, 0, 1)])).toBe('0 of 1 approval')
  })

  it('says when an approval went stale: nothing ran, it was asked again', () => {
    const stale = record({ outcome: 'stale', staleInterruptIds: ['i2'] })
    expect(decisionSummary(stale, { formatTime: hhmm })).toBe(
      'Approved by mgr via api at 10:32 — stale: nothing ran, asked again',
    )
  })

  it('calls a cancelled batch cancelled, never denied, and names the deadline', () => {
    const cancelled = record({
      entries: [
        { interruptId: 'i1', status: 'cancelled' },
        { interruptId: 'i2', status: 'cancelled' },
      ],
      decidedBy: 'system:expiry',
      via: 'expiry',
    })
    expect(decisionVerdict(cancelled)).toBe('cancelled')
    expect(decisionSummary(cancelled, { formatTime: hhmm })).toBe('Cancelled by the deadline via expiry at 10:32')
  })

  it('tells denials, answers to questions and mixed batches apart', () => {
    expect(entryVerdict({ status: 'resolved', payload: { approved: false, reason: 'expired' } })).toBe('denied')
    expect(entryVerdict({ status: 'resolved', payload: { environment: 'staging' } })).toBe('answered')
    expect(entryVerdict({ status: 'cancelled' })).toBe('cancelled')
    const mixed = record({
      entries: [
        { interruptId: 'i1', status: 'resolved', payload: { approved: false } },
        { interruptId: 'i2', status: 'resolved', payload: { approved: true } },
      ],
      decidedBy: 'eng',
      via: 'run',
    })
    expect(decisionSummary(mixed, { formatTime: hhmm })).toBe('Answered (1 denied, 1 approved) by eng via run at 10:32')
  })

  it('keeps an unreadable time as it came', () => {
    expect(decisionSummary(record({ at: 'soon' }))).toBe('Approved by mgr via api at soon')
  })
})

describe('decision records from the wire', () => {
  it('reads the record of an interlude.decision CUSTOM event and nothing else', () => {
    expect(decisionFromEvent({ type: 'CUSTOM', name: 'interlude.decision', value: record() })).toEqual(record())
    expect(decisionFromEvent({ type: 'CUSTOM', name: 'other', value: record() })).toBeUndefined()
    expect(decisionFromEvent({ type: 'CUSTOM', name: 'interlude.decision', value: { runId: 'x' } })).toBeUndefined()
    expect(decisionFromEvent(null)).toBeUndefined()
    expect(isDecisionRecord({ ...record(), via: 'fax' })).toBe(false)
    // Every channel a record may name: a decision by link, in Slack or by a grant is shown like any other.
    for (const via of ['run', 'api', 'expiry', 'rule', 'grant', 'link', 'slack'] as const) {
      expect(isDecisionRecord(record({ via }))).toBe(true)
    }
    expect(isDecisionRecord({ ...record(), entries: [1] })).toBe(false)
  })

  it('merges records once per run, oldest first', () => {
    const first = record({ runId: 'run_a', at: '2026-11-30T10:00:00.000Z' })
    const second = record({ runId: 'run_b', at: '2026-11-30T11:00:00.000Z' })
    expect(mergeDecisions([second], [first, second], undefined)).toEqual([first, second])
  })
})
