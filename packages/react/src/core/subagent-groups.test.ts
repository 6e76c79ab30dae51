import type { Interrupt } from '@interlude/protocol'
import { describe, expect, it } from 'vitest'
import { approvalInterrupt } from '../test-utils/controllable-transport.ts'
import { groupInterruptsBySubagent, shortSubagentLabel } from './subagent-groups.ts'

const inSubagent = (id: string, runId: string, name?: unknown, toolCallId?: unknown): Interrupt =>
  approvalInterrupt(id, `c-${id}`, {
    subagentRunId: runId,
    metadata: { toolName: 'sign_off', ...(name === undefined ? {} : { subagent: { name, toolCallId } }) },
  })

describe('groupInterruptsBySubagent', () => {
  it('puts the parent first, then one group per subagent run in the order of its first interrupt, keeping batch order inside', () => {
    const interrupts = Object.freeze([
      inSubagent('s1-a', 'sub_run_b', 'auditor', 'call-audit'),
      approvalInterrupt('p-1', 'c-p1'),
      inSubagent('s2-a', 'sub_run_a', 'reviewer', 'call-review'),
      inSubagent('s1-b', 'sub_run_b', 'auditor', 'call-audit'),
      approvalInterrupt('p-2', 'c-p2'),
    ])
    const groups = groupInterruptsBySubagent(interrupts)
    expect(groups.map((g) => [g.key, g.label, g.parentToolCallId, g.interrupts.map((i) => i.id)])).toEqual([
      ['parent', undefined, undefined, ['p-1', 'p-2']],
      ['subagent:sub_run_b', 'auditor', 'call-audit', ['s1-a', 's1-b']],
      ['subagent:sub_run_a', 'reviewer', 'call-review', ['s2-a']],
    ])
    // Every interrupt is in exactly one group: one resume still covers the whole batch.
    expect(groups.flatMap((g) => g.interrupts.map((i) => i.id)).sort()).toEqual(interrupts.map((i) => i.id).sort())
    expect(Object.isFrozen(groups)).toBe(true)
    expect(Object.isFrozen(groups[1])).toBe(true)
  })

  it('is identity-stable per interrupts array, and a new array gives new groups', () => {
    const interrupts = Object.freeze([approvalInterrupt('p-1', 'c-1'), inSubagent('s-1', 'sub_1', 'auditor')])
    expect(groupInterruptsBySubagent(interrupts)).toBe(groupInterruptsBySubagent(interrupts))
    expect(groupInterruptsBySubagent([...interrupts])).not.toBe(groupInterruptsBySubagent(interrupts))
    expect(groupInterruptsBySubagent(undefined)).toBe(groupInterruptsBySubagent([]))
    expect(groupInterruptsBySubagent(undefined)).toEqual([])
  })

  it('labels a subagent without a usable name "Subagent <short id>", and a batch without subagents is one parent group', () => {
    const groups = groupInterruptsBySubagent([
      inSubagent('a', 'subrun_0123456789abcdef'),
      inSubagent('b', 'xyz', 42),
      inSubagent('c', 'blank', '   '),
    ])
    expect(groups.map((g) => g.label)).toEqual(['Subagent 01234567', 'Subagent xyz', 'Subagent blank'])
    expect(groups.every((g) => g.parentToolCallId === undefined)).toBe(true)
    expect(shortSubagentLabel('run_')).toBe('Subagent run_')

    const parentOnly = groupInterruptsBySubagent([
      approvalInterrupt('p', 'c'),
      { ...approvalInterrupt('q', 'd'), subagentRunId: '' } as Interrupt,
    ])
    expect(parentOnly).toHaveLength(1)
    expect(parentOnly[0]!.interrupts.map((i) => i.id)).toEqual(['p', 'q'])
  })

  it('ignores a malformed metadata.subagent (array, string, null) and still groups by subagentRunId', () => {
    const odd = (id: string, subagent: unknown) =>
      approvalInterrupt(id, `c-${id}`, { subagentRunId: 'sub_x', metadata: { subagent } })
    const groups = groupInterruptsBySubagent([odd('1', ['auditor']), odd('2', 'auditor'), odd('3', null)])
    expect(groups).toHaveLength(1)
    expect(groups[0]).toMatchObject({ label: 'Subagent x', subagentRunId: 'sub_x' })
  })
})
