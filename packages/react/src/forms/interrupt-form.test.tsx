// @vitest-environment jsdom
import type { Interrupt } from '@interlude/protocol'
import { act, cleanup, fireEvent, render, renderHook, screen, within } from '@testing-library/react'
import { StrictMode, type ReactNode } from 'react'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { deepFreeze } from '../core/immutable.ts'
import type { PendingInterruptBatch } from '../core/types.ts'
import { approval, askBatch, deployArgs, history, releaseBatch } from '../test-utils/form-fixtures.ts'
import { InterruptForm } from './interrupt-form.tsx'
import { useInterruptForm } from './use-interrupt-form.ts'
import { validatePayload } from './validate-payload.ts'

afterEach(cleanup)

const strict = ({ children }: { children: ReactNode }) => <StrictMode>{children}</StrictMode>

describe('validatePayload (@cfworker/json-schema)', () => {
  it('accepts the deep-frozen schemas the runtime publishes', () => {
    const schema = deepFreeze({ ...approval(deployArgs), $defs: { env: { enum: ['a'] } } })
    expect(validatePayload(schema, { approved: true })).toEqual([])
    expect(validatePayload(schema, { approved: 1 })).toHaveLength(1)
    expect(Object.isFrozen(schema)).toBe(true)
  })

  it('reports leaf errors with payload paths', () => {
    const schema = approval(deployArgs)
    expect(validatePayload(schema, { approved: true })).toEqual([])
    const errors = validatePayload(schema, { approved: 'yes', editedArgs: { environment: 'dev', extra: 1 } })
    expect(errors.map((e) => [e.path.join('.'), e.keyword])).toEqual([
      ['approved', 'type'],
      ['editedArgs', 'required'],
      ['editedArgs.environment', 'enum'],
      ['editedArgs', 'additionalProperties'],
    ])
  })
})

describe('useInterruptForm', () => {
  it('builds the complete resume argument with the approve/deny/cancel shortcuts', () => {
    const { result } = renderHook(() => useInterruptForm(releaseBatch()), { wrapper: strict })
    expect(result.current).toMatchObject({ batchId: 'b-1', isComplete: false, isValid: false })
    expect(() => result.current.buildResume()).toThrow(expect.objectContaining({ code: 'INVALID_INPUT' }))
    act(() => result.current.approveAll())
    expect(result.current.buildResume()).toEqual({
      batchId: 'b-1',
      entries: [
        { interruptId: 'i-pub', status: 'resolved', payload: { approved: true } },
        { interruptId: 'i-dep', status: 'resolved', payload: { approved: true } },
      ],
    })
    act(() => result.current.denyAll())
    expect(result.current.buildResume().entries.map((e) => e.payload)).toEqual([
      { approved: false },
      { approved: false },
    ])
    act(() => result.current.cancelAll())
    expect(result.current.buildResume().entries).toEqual([
      { interruptId: 'i-pub', status: 'cancelled' },
      { interruptId: 'i-dep', status: 'cancelled' },
    ])
  })

  it('validates each answer against its responseSchema (edits included)', () => {
    const { result } = renderHook(() => useInterruptForm(releaseBatch(), { messages: history }), { wrapper: strict })
    act(() => {
      result.current.approve('i-pub')
      result.current.approve('i-dep')
      result.current.setField('i-dep', ['editedArgs'], result.current.toolArgs(result.current.interrupts[1]!))
    })
    expect(result.current.isValid).toBe(true)
    act(() => result.current.setField('i-dep', ['editedArgs', 'environment'], 'moon'))
    expect(result.current.isValid).toBe(false)
    expect(result.current.errors['i-dep']?.[0]).toMatchObject({ path: ['editedArgs', 'environment'], keyword: 'enum' })
    act(() => result.current.setField('i-dep', ['editedArgs', 'environment'], 'production'))
    expect(result.current.buildResume().entries[1]).toEqual({
      interruptId: 'i-dep',
      status: 'resolved',
      payload: { approved: true, editedArgs: { version: 'v2.1', environment: 'production' } },
    })
  })

  it('keeps drafts bound to the batch id the form was opened with', () => {
    const { result, rerender } = renderHook(
      ({ batch }: { batch: PendingInterruptBatch | undefined }) => useInterruptForm(batch),
      {
        wrapper: strict,
        initialProps: { batch: releaseBatch('b-old') as PendingInterruptBatch | undefined },
      },
    )
    act(() => result.current.approveAll())
    // The batch disappears (claimed, acknowledged): the drafts still belong to the old id.
    rerender({ batch: undefined })
    expect(result.current.buildResume().batchId).toBe('b-old')
    // A new batch (same interrupt ids reused by the server) starts fresh: old answers never move over.
    rerender({ batch: releaseBatch('b-new') })
    expect(result.current).toMatchObject({ batchId: 'b-new', drafts: {}, isComplete: false })
    expect(() => result.current.buildResume()).toThrow(expect.objectContaining({ code: 'INVALID_INPUT' }))
  })
})

describe('<InterruptForm>', () => {
  it('answers the release batch: approve with edited arguments, deny with a reason', () => {
    const onSubmit = vi.fn()
    render(
      <StrictMode>
        <InterruptForm batch={releaseBatch()} messages={history} onSubmit={onSubmit} />
      </StrictMode>,
    )
    const form = screen.getByRole('form', { name: 'The agent needs your answer' })
    const submit = within(form).getByRole('button', { name: 'Submit answers' })
    fireEvent.click(submit) // nothing answered yet: announced, not submitted
    expect(onSubmit).not.toHaveBeenCalled()
    expect(screen.getByRole('alert').textContent).toBe('Some answers are missing or invalid.')
    expect(screen.getAllByText('An answer is required.')).toHaveLength(2)
    const publish = screen.getByRole('group', { name: 'Publish release v2.1?' })
    const deploy = screen.getByRole('group', { name: 'Deploy v2.1 to staging?' })
    fireEvent.click(within(publish).getByRole('radio', { name: 'Deny' }))
    fireEvent.change(within(publish).getByLabelText('Reason'), { target: { value: 'not today' } })
    fireEvent.click(within(deploy).getByRole('radio', { name: 'Approve' }))
    fireEvent.click(within(deploy).getByLabelText('Edit arguments'))
    fireEvent.change(within(deploy).getByLabelText('Environment'), { target: { value: '1' } })
    fireEvent.change(within(deploy).getByLabelText('Replicas'), { target: { value: '0' } })
    // replicas must be >= 1: flagged on the field and not submittable.
    expect(within(deploy).getByLabelText('Replicas').getAttribute('aria-invalid')).toBe('true')
    fireEvent.click(submit)
    expect(onSubmit).not.toHaveBeenCalled()
    fireEvent.change(within(deploy).getByLabelText('Replicas'), { target: { value: '3' } })
    fireEvent.click(submit)
    expect(onSubmit).toHaveBeenCalledTimes(1)
    expect(onSubmit.mock.calls[0]![0]).toEqual({
      batchId: 'b-1',
      entries: [
        { interruptId: 'i-pub', status: 'resolved', payload: { approved: false, reason: 'not today' } },
        {
          interruptId: 'i-dep',
          status: 'resolved',
          payload: { approved: true, editedArgs: { version: 'v2.1', environment: 'production', replicas: 3 } },
        },
      ],
    })
  })

  it('answers an input_required question with enums, strings, booleans and nested objects; shows a stale-batch rejection', () => {
    const onSubmit = vi.fn(() => {
      throw Object.assign(new Error('Stale interrupt batch.'), { code: 'STALE_BATCH' })
    })
    render(<InterruptForm batch={askBatch()} onSubmit={onSubmit} />)
    fireEvent.change(screen.getByLabelText('Environment'), { target: { value: '1' } })
    fireEvent.change(screen.getByLabelText('Notes'), { target: { value: 'after 6pm' } })
    fireEvent.change(screen.getByLabelText('Urgent'), { target: { value: 'true' } })
    fireEvent.change(screen.getByLabelText('Hours'), { target: { value: '1.5' } })
    fireEvent.click(screen.getByRole('button', { name: 'Submit answers' }))
    expect(onSubmit).toHaveBeenCalledWith({
      batchId: 'b-ask',
      entries: [
        {
          interruptId: 'i-ask',
          status: 'resolved',
          payload: { environment: 'production', notes: 'after 6pm', urgent: true, window: { hours: 1.5 } },
        },
      ],
    })
    expect(screen.getByRole('alert').textContent).toContain('Stale interrupt batch.')
  })

  it('cancels the whole batch and renders nothing without a batch', () => {
    const onSubmit = vi.fn()
    const { rerender, container } = render(<InterruptForm batch={askBatch()} onSubmit={onSubmit} />)
    fireEvent.click(screen.getByRole('button', { name: 'Submit answers' }))
    expect(screen.getAllByText('An answer is required.')).toHaveLength(1) // once per question
    expect(onSubmit).not.toHaveBeenCalled()
    fireEvent.click(screen.getByRole('button', { name: 'Cancel all' }))
    fireEvent.click(screen.getByRole('button', { name: 'Submit answers' }))
    expect(onSubmit).toHaveBeenCalledWith({
      batchId: 'b-ask',
      entries: [{ interruptId: 'i-ask', status: 'cancelled' }],
    })
    rerender(<InterruptForm batch={undefined} onSubmit={onSubmit} />)
    expect(container.innerHTML).toBe('')
    const unknownReason: Interrupt = { id: 'x', reason: 'interlude:custom' }
    render(<InterruptForm batch={{ id: 'b', interrupts: [unknownReason] }} onSubmit={onSubmit} />)
    expect(screen.getByRole('group', { name: 'interlude:custom' })).toBeTruthy()
  })

  it('answers a required boolean false as a deliberate choice (nested and root schemas), keyboard-reachable and labelled', () => {
    const onSubmit = vi.fn()
    const nested = deepFreeze({
      id: 'b-bool',
      interrupts: [
        {
          id: 'q',
          reason: 'input_required',
          message: 'Confirm?',
          responseSchema: {
            type: 'object',
            properties: { confirm: { type: 'boolean' } },
            required: ['confirm'],
            additionalProperties: false,
          },
        },
      ],
    }) as PendingInterruptBatch
    const view = render(
      <StrictMode>
        <InterruptForm batch={nested} onSubmit={onSubmit} />
      </StrictMode>,
    )
    const submit = screen.getByRole('button', { name: 'Submit answers' })
    // Untouched is not an answer (no silent `false`).
    fireEvent.click(submit)
    expect(onSubmit).not.toHaveBeenCalled()
    const confirm = screen.getByRole('combobox', { name: 'Confirm' }) as HTMLSelectElement
    expect(confirm.value).toBe('')
    expect([...confirm.options].map((o) => o.textContent)).toEqual(['Choose…', 'Yes', 'No'])
    fireEvent.change(confirm, { target: { value: 'false' } })
    fireEvent.click(submit)
    expect(onSubmit).toHaveBeenLastCalledWith({
      batchId: 'b-bool',
      entries: [{ interruptId: 'q', status: 'resolved', payload: { confirm: false } }],
    })
    view.unmount()

    const root = deepFreeze({
      id: 'b-root',
      interrupts: [{ id: 'r', reason: 'confirmation', message: 'Proceed?', responseSchema: { type: 'boolean' } }],
    }) as PendingInterruptBatch
    render(
      <StrictMode>
        <InterruptForm batch={root} onSubmit={onSubmit} />
      </StrictMode>,
    )
    const answer = screen.getByRole('combobox', { name: 'Answer' }) as HTMLSelectElement
    fireEvent.click(screen.getByRole('button', { name: 'Submit answers' }))
    expect(onSubmit).toHaveBeenCalledTimes(1) // unanswered root boolean: not submitted
    fireEvent.change(answer, { target: { value: 'true' } })
    fireEvent.change(answer, { target: { value: '' } }) // back to "Choose…": unanswered again
    fireEvent.click(screen.getByRole('button', { name: 'Submit answers' }))
    expect(onSubmit).toHaveBeenCalledTimes(1)
    fireEvent.change(answer, { target: { value: 'false' } })
    fireEvent.click(screen.getByRole('button', { name: 'Submit answers' }))
    expect(onSubmit).toHaveBeenLastCalledWith({
      batchId: 'b-root',
      entries: [{ interruptId: 'r', status: 'resolved', payload: false }],
    })
  })

  it('a new batch reusing interrupt ids starts with fresh field text (no leaked JSON draft)', () => {
    const schema = {
      type: 'object',
      properties: { items: { type: 'array', items: { type: 'string' } } },
      required: ['items'],
    }
    const mk = (id: string) =>
      deepFreeze({
        id,
        interrupts: [{ id: 'q', reason: 'input_required', message: 'List?', responseSchema: schema }],
      }) as PendingInterruptBatch
    const onSubmit = vi.fn()
    const view = render(
      <StrictMode>
        <InterruptForm batch={mk('local-1')} onSubmit={onSubmit} />
      </StrictMode>,
    )
    fireEvent.change(screen.getByLabelText('Items (JSON)'), { target: { value: '["old answer"]' } })
    view.rerender(
      <StrictMode>
        <InterruptForm batch={mk('local-2')} onSubmit={onSubmit} />
      </StrictMode>,
    )
    expect((screen.getByLabelText('Items (JSON)') as HTMLTextAreaElement).value).toBe('')
    fireEvent.click(screen.getByRole('button', { name: 'Submit answers' }))
    expect(onSubmit).not.toHaveBeenCalled()
    fireEvent.change(screen.getByLabelText('Items (JSON)'), { target: { value: '["new"]' } })
    fireEvent.click(screen.getByRole('button', { name: 'Submit answers' }))
    expect(onSubmit).toHaveBeenCalledWith({
      batchId: 'local-2',
      entries: [{ interruptId: 'q', status: 'resolved', payload: { items: ['new'] } }],
    })
  })
})
