import { describe, expect, it } from 'vitest'
import type { DecisionRecord, ResumeEntry } from '@interlude/protocol'
import { SYSTEM_ESCALATION_PRINCIPAL } from '@interlude/protocol'
import type { StoredInterrupt } from '../../store/store.ts'
import type { VotePolicy } from './vote-policy.ts'
import { pendingTallies, tallyBatch } from './vote-tally.ts'

/** Where votes stand, replayed from the records alone (docs/approvals.md#organisation-policies). */
const item = (id: string): StoredInterrupt => ({
  interrupt: { id, reason: 'tool_call' },
  kind: 'approval',
  toolCallId: `call-${id}`,
  toolName: 'deploy',
})
const yes = (id: string): ResumeEntry => ({ interruptId: id, status: 'resolved', payload: { approved: true } })
const no = (id: string): ResumeEntry => ({ interruptId: id, status: 'resolved', payload: { approved: false } })
let n = 0
const vote = (by: string, stage: number, ...entries: ResumeEntry[]): DecisionRecord => ({
  threadId: 't',
  runId: `run-${++n}`,
  batchId: 'b',
  interruptIds: [],
  entries,
  decidedBy: by,
  via: 'api',
  at: '2026-12-02T12:00:00.000Z',
  vote: true,
  stage,
})
const { vote: _marker, ...unmarked } = vote(SYSTEM_ESCALATION_PRINCIPAL, 2)
const escalation: DecisionRecord = { ...unmarked, entries: [] }

const stage = (quorum: number, of?: string[]) => ({ of: of ? new Set(of) : undefined, quorum })
const quorum2: VotePolicy = { stages: [stage(2)], notRequester: true, counts: true }
const chain: VotePolicy = { stages: [stage(1, ['bob']), stage(1, ['mgr'])], notRequester: false, counts: true }
const escalating: VotePolicy = { ...chain, escalate: { afterMs: 1000, stage: stage(1, ['lead']) } }

describe('tallyBatch', () => {
  it('a quorum of 2: open after one approval, settled by the second with its entry', () => {
    const one = tallyBatch([item('a')], () => quorum2, [vote('bob', 0, yes('a'))])
    expect(pendingTallies(one)).toEqual([{ interruptId: 'a', stage: 0, approvals: 1, quorum: 2 }])
    expect([...one.interrupts[0]!.voters]).toEqual(['bob'])
    const two = tallyBatch([item('a')], () => quorum2, [vote('bob', 0, yes('a')), vote('mgr', 0, yes('a'))])
    expect(two.interrupts[0]!.settled).toEqual(yes('a'))
    expect(pendingTallies(two)).toEqual([])
  })

  it('any denial settles the interrupt denied, whatever came before', () => {
    const tally = tallyBatch([item('a')], () => quorum2, [vote('bob', 0, yes('a')), vote('mgr', 0, no('a'))])
    expect(tally.interrupts[0]!.settled).toEqual(no('a'))
  })

  it('a chain moves to the next stage once a stage approved, and settles after the last', () => {
    const first = tallyBatch([item('a')], () => chain, [vote('bob', 0, yes('a'))])
    expect(pendingTallies(first)).toEqual([{ interruptId: 'a', stage: 1, approvals: 0, quorum: 1 }])
    const both = tallyBatch([item('a')], () => chain, [vote('bob', 0, yes('a')), vote('mgr', 1, yes('a'))])
    expect(both.interrupts[0]!.settled).toEqual(yes('a'))
  })

  it('after an escalation the votes before it count no more, and one approval settles', () => {
    const records = [vote('bob', 0, yes('a')), escalation]
    const escalated = tallyBatch([item('a')], () => escalating, records)
    expect(escalated.escalated).toBe(true)
    expect(pendingTallies(escalated)).toEqual([{ interruptId: 'a', stage: 2, approvals: 0, quorum: 1 }])
    const decided = tallyBatch([item('a')], () => escalating, [...records, vote('lead', 2, yes('a'))])
    expect(decided.interrupts[0]!.settled).toEqual(yes('a'))
  })

  it('interrupts of one batch are counted apart; a vote names only those still open', () => {
    const single: VotePolicy = { stages: [stage(1)], notRequester: false, counts: false }
    const policyOf = (i: StoredInterrupt) => (i.interrupt.id === 'p' ? single : quorum2)
    const tally = tallyBatch([item('p'), item('d')], policyOf, [vote('bob', 0, yes('p'), yes('d'))])
    expect(tally.interrupts[0]!.settled).toEqual(yes('p'))
    expect(pendingTallies(tally)).toEqual([{ interruptId: 'd', stage: 0, approvals: 1, quorum: 2 }])
  })
})
