// @vitest-environment jsdom
import { cleanup, fireEvent, render, screen, within } from '@testing-library/react'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { presentForeignInterrupt } from '../core/foreign-answers.ts'
import { legacyInterrupt } from '../core/foreign-interrupts.ts'
import { hitlRequest, LANGGRAPH_INTERRUPT_ID } from '../test-utils/recorded-streams.ts'
import { InterruptForm } from './interrupt-form.tsx'

afterEach(cleanup)

/** A legacy LangGraph pause as the runtime publishes it (docs/decisions.md#foreign-servers). */
function received(value: unknown) {
  const event = { name: 'on_interrupt', value: JSON.stringify(value), rawEvent: { id: LANGGRAPH_INTERRUPT_ID, value } }
  return presentForeignInterrupt(legacyInterrupt(event, 'run-1', 0)!)
}

describe('<InterruptForm> with foreign interrupts', () => {
  it.each([
    ['a LangGraph interrupt() question', { question: 'Deploy v2.1 to production?', environment: 'production' }],
    ['a HITL middleware request', hitlRequest],
  ])('%s: titled by its question, with its arguments and approve / deny / cancel', (_name, value) => {
    const interrupt = received(value)
    const onSubmit = vi.fn()
    render(<InterruptForm batch={{ id: 'b1', interrupts: [interrupt] }} onSubmit={onSubmit} />)
    const group = screen.getByRole('group')
    expect(within(group).queryByText('langgraph:interrupt')).toBeNull()
    expect(group.querySelector('legend')?.textContent).toBe(interrupt.message)
    expect(within(group).getByText('production')).toBeTruthy()
    fireEvent.click(within(group).getByRole('radio', { name: 'Approve' }))
    fireEvent.click(screen.getByRole('button', { name: 'Submit answers' }))
    expect(onSubmit).toHaveBeenCalledWith({
      batchId: 'b1',
      entries: [{ interruptId: LANGGRAPH_INTERRUPT_ID, status: 'resolved', payload: { approved: true } }],
    })
  })
})
