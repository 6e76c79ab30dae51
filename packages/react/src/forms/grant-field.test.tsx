// @vitest-environment jsdom
import { cleanup, fireEvent, render, screen } from '@testing-library/react'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { deepFreeze } from '../core/immutable.ts'
import type { PendingInterruptBatch } from '../core/types.ts'
import { approval } from '../test-utils/form-fixtures.ts'
import { InterruptForm } from './interrupt-form.tsx'

afterEach(cleanup)

/** The `grant` of an approval schema, as the server offers it (docs/protocol.md#the-approval-schema). */
const GRANT = {
  type: 'object',
  title: 'Also allow later calls',
  properties: {
    calls: { type: 'integer', minimum: 1, maximum: 10, title: 'Calls' },
    until: { type: 'string', format: 'date-time', title: 'Until' },
    scope: { type: 'string', enum: ['thread', 'principal'], title: 'Where' },
  },
  required: ['calls', 'scope'],
  additionalProperties: false,
}

const batch = (withGrant: boolean) =>
  deepFreeze({
    id: 'b-deploy',
    interrupts: [
      {
        id: 'i-deploy',
        reason: 'tool_call',
        toolCallId: 'c-deploy',
        message: 'Deploy v2 to staging?',
        responseSchema: withGrant
          ? { ...approval(), properties: { ...approval().properties, grant: GRANT } }
          : approval(),
      },
    ],
  }) as PendingInterruptBatch

describe('a bounded grant in an approval (docs/approvals.md#bounded-grants)', () => {
  it('is off by default; checked, it sends calls and scope with the approval; unchecked again, none', () => {
    const onSubmit = vi.fn()
    render(<InterruptForm batch={batch(true)} onSubmit={onSubmit} />)
    expect(screen.queryByLabelText('Also allow later calls')).toBeNull()
    fireEvent.click(screen.getByLabelText('Approve'))
    const toggle = screen.getByLabelText('Also allow later calls') as HTMLInputElement
    expect(toggle.checked).toBe(false)
    fireEvent.click(toggle)
    fireEvent.change(screen.getByLabelText(/^Calls/), { target: { value: '3' } })
    fireEvent.click(screen.getByRole('button', { name: 'Submit answers' }))
    expect(onSubmit.mock.calls.at(-1)?.[0].entries[0].payload).toEqual({
      approved: true,
      grant: { calls: 3, scope: 'thread' },
    })
    fireEvent.click(toggle)
    fireEvent.click(screen.getByRole('button', { name: 'Submit answers' }))
    expect(onSubmit.mock.calls.at(-1)?.[0].entries[0].payload).toEqual({ approved: true })
  })

  it('more calls than the grant allows is refused in the form, not sent', () => {
    const onSubmit = vi.fn()
    render(<InterruptForm batch={batch(true)} onSubmit={onSubmit} />)
    fireEvent.click(screen.getByLabelText('Approve'))
    fireEvent.click(screen.getByLabelText('Also allow later calls'))
    fireEvent.change(screen.getByLabelText(/^Calls/), { target: { value: '11' } })
    fireEvent.click(screen.getByRole('button', { name: 'Submit answers' }))
    expect(onSubmit).not.toHaveBeenCalled()
  })

  it('a schema without grant shows no such control', () => {
    render(<InterruptForm batch={batch(false)} onSubmit={vi.fn()} />)
    fireEvent.click(screen.getByLabelText('Approve'))
    expect(screen.queryByLabelText('Also allow later calls')).toBeNull()
  })
})
