// @vitest-environment jsdom
import { act, cleanup, fireEvent, render, screen, within } from '@testing-library/react'
import { StrictMode, useState } from 'react'
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { PendingInterruptBatch } from '../core/types.ts'
import { askBatch, history, releaseBatch } from '../test-utils/form-fixtures.ts'
import { InterruptForm } from './interrupt-form.tsx'
import { useInterruptForm, type InterruptDrafts, type UseInterruptFormResult } from './use-interrupt-form.ts'

afterEach(cleanup)

/** A parent that owns the form state and hands it to <InterruptForm> (controlled mode). */
function Controlled(props: {
  batch: PendingInterruptBatch | undefined
  onForm: (form: UseInterruptFormResult) => void
  onSubmit?: (resume: unknown) => void
  onDraftsChange?: (drafts: InterruptDrafts, form: UseInterruptFormResult) => void
}) {
  const form = useInterruptForm(props.batch, { messages: history })
  props.onForm(form)
  return (
    <InterruptForm
      batch={props.batch}
      form={form}
      onSubmit={props.onSubmit ?? (() => undefined)}
      {...(props.onDraftsChange ? { onDraftsChange: props.onDraftsChange } : {})}
    />
  )
}

describe('<InterruptForm> controlled by a useInterruptForm result', () => {
  it('renders and edits the caller’s drafts, in both directions', () => {
    let form: UseInterruptFormResult | undefined
    const onSubmit = vi.fn()
    render(
      <StrictMode>
        <Controlled batch={releaseBatch()} onForm={(f) => (form = f)} onSubmit={onSubmit} />
      </StrictMode>,
    )
    const publish = screen.getByRole('group', { name: 'Publish release v2.1?' })
    const deploy = screen.getByRole('group', { name: 'Deploy v2.1 to staging?' })
    // The person answers in the form: the caller's drafts change.
    fireEvent.click(within(publish).getByRole('radio', { name: 'Deny' }))
    expect(form!.drafts['i-pub']).toEqual({ status: 'resolved', payload: { approved: false } })
    // The caller answers through its form object: the rendered form shows it.
    act(() => form!.approve('i-dep'))
    expect((within(deploy).getByRole('radio', { name: 'Approve' }) as HTMLInputElement).checked).toBe(true)
    fireEvent.click(within(deploy).getByLabelText('Edit arguments'))
    expect(form!.drafts['i-dep']).toEqual({
      status: 'resolved',
      payload: { approved: true, editedArgs: { version: 'v2.1', environment: 'staging' } },
    })
    fireEvent.click(screen.getByRole('button', { name: 'Submit answers' }))
    expect(onSubmit).toHaveBeenCalledWith(form!.buildResume())
  })

  it('renders nothing when the form belongs to another batch than the one shown', () => {
    function Mismatch() {
      const form = useInterruptForm(releaseBatch('b-form'))
      return <InterruptForm batch={releaseBatch('b-shown')} form={form} onSubmit={() => undefined} />
    }
    const { container } = render(<Mismatch />)
    expect(container.innerHTML).toBe('')
  })
})

describe('<InterruptForm onDraftsChange>', () => {
  it('reports each change after commit, once under StrictMode, never for an opening batch', () => {
    const reported: [InterruptDrafts, string | undefined][] = []
    const onDraftsChange = (drafts: InterruptDrafts, form: UseInterruptFormResult) =>
      reported.push([drafts, form.batchId])
    function Host() {
      const [batch, setBatch] = useState<PendingInterruptBatch>(() => askBatch('b-1'))
      return (
        <>
          <button type="button" onClick={() => setBatch(askBatch('b-2'))}>
            next batch
          </button>
          <InterruptForm batch={batch} onSubmit={() => undefined} onDraftsChange={onDraftsChange} />
        </>
      )
    }
    render(
      <StrictMode>
        <Host />
      </StrictMode>,
    )
    expect(reported).toEqual([])
    fireEvent.change(screen.getByLabelText('Environment'), { target: { value: '0' } })
    expect(reported).toEqual([[{ 'i-ask': { status: 'resolved', payload: { environment: 'staging' } } }, 'b-1']])
    fireEvent.click(screen.getByRole('button', { name: 'Cancel all' }))
    expect(reported.at(-1)).toEqual([{ 'i-ask': { status: 'cancelled' } }, 'b-1'])
    // A new batch opens with fresh drafts: not a change by the person.
    fireEvent.click(screen.getByRole('button', { name: 'next batch' }))
    expect(reported).toHaveLength(2)
    fireEvent.change(screen.getByLabelText('Notes'), { target: { value: 'x' } })
    expect(reported.at(-1)).toEqual([{ 'i-ask': { status: 'resolved', payload: { notes: 'x' } } }, 'b-2'])
  })

  it('reports changes the caller makes through a controlled form too', () => {
    let form: UseInterruptFormResult | undefined
    const onDraftsChange = vi.fn()
    render(<Controlled batch={releaseBatch()} onForm={(f) => (form = f)} onDraftsChange={onDraftsChange} />)
    act(() => form!.approveAll())
    expect(onDraftsChange).toHaveBeenCalledTimes(1)
    expect(onDraftsChange.mock.calls[0]![0]).toEqual({
      'i-pub': { status: 'resolved', payload: { approved: true } },
      'i-dep': { status: 'resolved', payload: { approved: true } },
    })
    expect(onDraftsChange.mock.calls[0]![1]).toBe(form)
  })
})
