// @vitest-environment jsdom
/**
 * A batch that mixes the parent's approvals and a subagent's (docs/client-contract.md#subagents), in <StrictMode>:
 * the form shows the parent's questions first, then a section per subagent named after it, and one submit answers
 * every interrupt of the batch (the server routes each entry by its interrupt id).
 */
import type { Interrupt } from '@interlude/protocol'
import { act, cleanup, fireEvent, render, renderHook, screen, within } from '@testing-library/react'
import { StrictMode, type ReactNode } from 'react'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { deepFreeze } from '../core/immutable.ts'
import type { PendingInterruptBatch } from '../core/types.ts'
import { approval } from '../test-utils/form-fixtures.ts'
import { InterruptForm } from './interrupt-form.tsx'
import { useInterruptForm } from './use-interrupt-form.ts'

afterEach(cleanup)

const strict = ({ children }: { children: ReactNode }) => <StrictMode>{children}</StrictMode>

const ask = (id: string, message: string, extra: Partial<Interrupt> = {}): Interrupt => ({
  id,
  reason: 'tool_call',
  toolCallId: `call-${id}`,
  message,
  responseSchema: approval(),
  ...extra,
})
const fromSubagent = (runId: string, name: string | undefined) => ({
  subagentRunId: runId,
  metadata: name === undefined ? {} : { subagent: { name, toolCallId: 'call-audit' } },
})

/** The subagent's approval comes first on the wire; the form still shows the parent's first. */
const mixedBatch = (): PendingInterruptBatch =>
  deepFreeze({
    id: 'b-mixed',
    interrupts: [
      ask('i-sign', 'Sign off v2.1?', fromSubagent('sub_audit_1', 'auditor')),
      ask('i-pub', 'Publish release v2.1?'),
      ask('i-scan', 'Run the scanner?', fromSubagent('subrun_9f8e7d6c5b4a', undefined)),
    ],
  })

describe('<InterruptForm> with subagent interrupts', () => {
  it('shows the parent first, then a labelled section per subagent, and submits one resume for the whole batch', () => {
    const onSubmit = vi.fn()
    render(
      <StrictMode>
        <InterruptForm batch={mixedBatch()} onSubmit={onSubmit} />
      </StrictMode>,
    )
    const legends = screen.getAllByRole('group').flatMap((g) => (g.tagName === 'FIELDSET' ? [g] : []))
    expect(legends.map((f) => within(f).getAllByText(/\?$/)[0]!.textContent)).toEqual([
      'Publish release v2.1?',
      'Sign off v2.1?',
      'Run the scanner?',
    ])
    const auditor = screen.getByRole('region', { name: 'auditor' })
    expect(auditor.getAttribute('data-subagent-run-id')).toBe('sub_audit_1')
    expect(within(auditor).getByText('Sign off v2.1?')).toBeTruthy()
    const unnamed = screen.getByRole('region', { name: 'Subagent 9f8e7d6c' })
    expect(within(unnamed).getByText('Run the scanner?')).toBeTruthy()
    expect(within(auditor).queryByText('Publish release v2.1?')).toBeNull()

    // Keyboard-operable radios: choose in each group, then submit once.
    fireEvent.click(within(auditor).getByRole('radio', { name: 'Approve' }))
    fireEvent.click(within(unnamed).getByRole('radio', { name: 'Deny' }))
    fireEvent.click(screen.getByRole('button', { name: 'Submit answers' }))
    expect(onSubmit).not.toHaveBeenCalled() // the parent's question is still open
    expect(screen.getByRole('alert').textContent).toContain('missing')
    const parent = screen.getAllByRole('group').find((g) => g.textContent?.includes('Publish release'))!
    fireEvent.click(within(parent).getByRole('radio', { name: 'Approve' }))
    fireEvent.click(screen.getByRole('button', { name: 'Submit answers' }))
    expect(onSubmit).toHaveBeenCalledTimes(1)
    expect(onSubmit.mock.calls[0]![0]).toEqual({
      batchId: 'b-mixed',
      entries: [
        { interruptId: 'i-sign', status: 'resolved', payload: { approved: true } },
        { interruptId: 'i-pub', status: 'resolved', payload: { approved: true } },
        { interruptId: 'i-scan', status: 'resolved', payload: { approved: false } },
      ],
    })
  })

  it('adds classNames.group to each subagent section, which keeps its own class', () => {
    render(<InterruptForm batch={mixedBatch()} onSubmit={() => {}} classNames={{ group: 'my-group' }} />)
    const sections = document.querySelectorAll('section.interlude-subagent-group')
    expect(sections).toHaveLength(2)
    expect([...sections].every((s) => s.classList.contains('my-group'))).toBe(true)
    expect(sections[0]!.querySelector('h3.interlude-subagent-group-title')!.textContent).toBe('auditor')
  })

  it('a batch without subagents renders no subagent section', () => {
    render(<InterruptForm batch={{ id: 'b', interrupts: [ask('i-1', 'Publish?')] }} onSubmit={() => {}} />)
    expect(screen.queryByRole('region')).toBeNull()
    expect(document.querySelector('.interlude-subagent-group')).toBeNull()
  })
})

describe('useInterruptForm groups', () => {
  it('groups by subagent with stable identity across renders, and Approve all covers every group', () => {
    const batch = mixedBatch()
    const { result, rerender } = renderHook(() => useInterruptForm(batch), { wrapper: strict })
    const groups = result.current.groups
    expect(groups.map((g) => [g.label, g.interrupts.map((i) => i.id)])).toEqual([
      [undefined, ['i-pub']],
      ['auditor', ['i-sign']],
      ['Subagent 9f8e7d6c', ['i-scan']],
    ])
    rerender()
    expect(result.current.groups).toBe(groups)
    act(() => result.current.approveAll())
    expect(result.current.groups).toBe(groups) // drafts changed, the batch did not
    expect(result.current.buildResume().entries.map((e) => e.interruptId)).toEqual(['i-sign', 'i-pub', 'i-scan'])
  })
})
