// @vitest-environment jsdom
/**
 * Custom renderers and inline approvals (docs/client-contract.md#custom-renderers), inside <StrictMode>: a renderer
 * receives the interrupt, its parsed arguments and bound setters; its answer is validated with the rest of the batch;
 * an approval answered at its tool call is submitted once with the batch.
 */
import type { Interrupt } from '@interlude/protocol'
import { cleanup, fireEvent, render, screen, within } from '@testing-library/react'
import { StrictMode, type ReactNode } from 'react'
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { PendingInterruptBatch, ResumeOptions } from '../core/types.ts'
import { history, releaseBatch } from '../test-utils/form-fixtures.ts'
import { InlineApproval, InterruptFormProvider, useInterrupt } from './interrupt-context.tsx'
import { InterruptForm } from './interrupt-form.tsx'
import type { InterruptRendererProps } from './interrupt-renderer.ts'
import { useInterruptForm } from './use-interrupt-form.ts'
import { resumeOf, openForm } from './form-state.ts'

afterEach(cleanup)

interface DeployArgs {
  readonly version: string
  readonly environment: string
  readonly replicas?: number
}

/** The card an app writes for its `deploy` tool: about fifteen lines. */
function DeployCard({ args, decision, approve, deny, editArgs, disabled }: InterruptRendererProps<DeployArgs>) {
  return (
    <div className="deploy-card">
      <p>
        Deploy {args?.version} to {args?.environment}? {decision && <strong>{decision}</strong>}
      </p>
      <button type="button" disabled={disabled} onClick={approve}>
        Ship it
      </button>
      <button type="button" disabled={disabled} onClick={() => editArgs((a) => ({ ...a!, environment: 'production' }))}>
        Ship to production
      </button>
      <button type="button" disabled={disabled} onClick={() => deny('Freeze week')}>
        Not now
      </button>
    </div>
  )
}

describe('<InterruptForm renderers>', () => {
  it('gives a renderer the interrupt, its parsed arguments and setters bound to it', () => {
    const seen: InterruptRendererProps<DeployArgs>[] = []
    function Spy(props: InterruptRendererProps<DeployArgs>) {
      seen.push(props)
      return <DeployCard {...props} />
    }
    const onSubmit = vi.fn()
    render(
      <StrictMode>
        <InterruptForm batch={releaseBatch()} messages={history} onSubmit={onSubmit} renderers={{ deploy: Spy }} />
      </StrictMode>,
    )
    const last = seen.at(-1)!
    expect(last).toMatchObject({
      interrupt: { id: 'i-dep', toolCallId: 'c-dep' },
      toolName: 'deploy',
      title: 'Deploy v2.1 to staging?',
      args: { version: 'v2.1', environment: 'staging' },
      decision: undefined,
      missing: false,
      disabled: false,
    })
    // The other tool keeps the default question; the deploy group holds the card instead of radios.
    const deploy = screen.getByRole('group', { name: 'Deploy v2.1 to staging?' })
    expect(within(deploy).queryByRole('radio')).toBeNull()
    fireEvent.click(within(deploy).getByRole('button', { name: 'Ship to production' }))
    expect(seen.at(-1)).toMatchObject({
      decision: 'approved',
      effectiveArgs: { version: 'v2.1', environment: 'production' },
    })
    fireEvent.click(within(deploy).getByRole('button', { name: 'Not now' }))
    expect(seen.at(-1)!.payload).toEqual({ approved: false, reason: 'Freeze week' })
    fireEvent.click(within(deploy).getByRole('button', { name: 'Ship it' }))
    const publish = screen.getByRole('group', { name: 'Publish release v2.1?' })
    fireEvent.click(within(publish).getByRole('radio', { name: 'Approve' }))
    fireEvent.click(screen.getByRole('button', { name: 'Submit answers' }))
    expect(onSubmit).toHaveBeenCalledTimes(1)
    // `onClick={approve}` passes a click event, which never becomes part of the answer; nor does the denial's note.
    expect(onSubmit.mock.calls[0]![0]).toEqual({
      batchId: 'b-1',
      entries: [
        { interruptId: 'i-pub', status: 'resolved', payload: { approved: true } },
        { interruptId: 'i-dep', status: 'resolved', payload: { approved: true } },
      ],
    })
  })

  it('refuses a renderer’s invalid answer with the same errors as the default form', () => {
    function BadCard({ editArgs }: InterruptRendererProps<DeployArgs>) {
      return (
        <button type="button" onClick={() => editArgs((a) => ({ ...a!, environment: 'moon' }))}>
          Ship to the moon
        </button>
      )
    }
    const onSubmit = vi.fn()
    render(
      <StrictMode>
        <InterruptForm batch={releaseBatch()} messages={history} onSubmit={onSubmit} renderers={{ deploy: BadCard }} />
      </StrictMode>,
    )
    fireEvent.click(
      within(screen.getByRole('group', { name: 'Publish release v2.1?' })).getByRole('radio', { name: 'Approve' }),
    )
    fireEvent.click(screen.getByRole('button', { name: 'Ship to the moon' }))
    fireEvent.click(screen.getByRole('button', { name: 'Submit answers' }))
    expect(onSubmit).not.toHaveBeenCalled()
    expect(screen.getByRole('alert').textContent).toBe('Some answers are missing or invalid.')
    // The same payload given through the headless form: the same INVALID_INPUT and the same errors.
    const state = openForm(releaseBatch())
    const payload = { approved: true, editedArgs: { version: 'v2.1', environment: 'moon' } }
    let expected: unknown
    try {
      resumeOf({
        ...state,
        drafts: {
          'i-pub': { status: 'resolved', payload: { approved: true } },
          'i-dep': { status: 'resolved', payload },
        },
      })
    } catch (error) {
      expected = error
    }
    expect(expected).toMatchObject({ code: 'INVALID_INPUT' })
    const errors = (expected as { details: { errors: Record<string, { message: string }[]> } }).details.errors['i-dep']!
    expect(errors).toEqual([expect.objectContaining({ path: ['editedArgs', 'environment'], keyword: 'enum' })])
    const deploy = screen.getByRole('group', { name: 'Deploy v2.1 to staging?' })
    const note = within(deploy).getByText((text) => text.startsWith('editedArgs.environment: '))
    expect(note.textContent).toBe(`editedArgs.environment: ${errors[0]!.message}`)
    expect(deploy.getAttribute('aria-describedby')).toBe(note.id)
  })
})

const calls = (history[0] as { toolCalls: { id: string; function: { name: string } }[] }).toolCalls

/** A chat screen: the message list shows the deploy approval at its call, the batch form below. */
function Screen({ batch, onSubmit }: { batch: PendingInterruptBatch; onSubmit: (r: ResumeOptions) => unknown }) {
  const form = useInterruptForm(batch, { messages: history })
  return (
    <InterruptFormProvider form={form} onSubmit={onSubmit} renderers={{ deploy: DeployCard }}>
      <ol aria-label="Conversation">
        {calls.map((call) => (
          <li key={call.id}>
            {call.function.name}
            {call.function.name === 'deploy' && <InlineApproval toolCallId={call.id} />}
          </li>
        ))}
        <li>
          later call
          <InlineApproval toolCallId="c-later" />
        </li>
      </ol>
      <InterruptForm batch={batch} onSubmit={onSubmit} />
    </InterruptFormProvider>
  )
}

describe('<InlineApproval> under <InterruptFormProvider>', () => {
  it('answers at the tool call, summarizes it in the batch form, and sends one resume with every answer', () => {
    const onSubmit = vi.fn()
    render(
      <StrictMode>
        <Screen batch={releaseBatch()} onSubmit={onSubmit} />
      </StrictMode>,
    )
    const conversation = screen.getByRole('list', { name: 'Conversation' })
    const inline = within(conversation).getByRole('group', { name: 'Deploy v2.1 to staging?' })
    const form = screen.getByRole('form', { name: 'The agent needs your answer' })
    // Shown inline, the deploy question is a summary in the batch form, not a second set of controls.
    const summary = within(form).getByRole('group', { name: 'Deploy v2.1 to staging?' })
    expect(summary.textContent).toContain('Answer it at its tool call in the conversation.')
    expect(within(summary).queryByRole('button')).toBeNull()
    fireEvent.click(within(form).getByRole('button', { name: 'Submit answers' }))
    expect(onSubmit).not.toHaveBeenCalled()
    expect(within(inline).getByText('An answer is required.')).toBeDefined()
    fireEvent.click(within(inline).getByRole('button', { name: 'Ship it' }))
    expect(summary.textContent).toContain('Approved at its tool call.')
    const publish = within(form).getByRole('group', { name: 'Publish release v2.1?' })
    fireEvent.click(within(publish).getByRole('radio', { name: 'Deny' }))
    fireEvent.click(within(form).getByRole('button', { name: 'Submit answers' }))
    expect(onSubmit).toHaveBeenCalledTimes(1)
    expect(onSubmit).toHaveBeenCalledWith({
      batchId: 'b-1',
      entries: [
        { interruptId: 'i-pub', status: 'resolved', payload: { approved: false } },
        { interruptId: 'i-dep', status: 'resolved', payload: { approved: true } },
      ],
    })
  })

  it('lets a card answer and submit in one click (approve(); submit()), sending the batch once', () => {
    const onSubmit = vi.fn()
    function OneClick({ interrupt }: { interrupt: Interrupt }) {
      const approval = useInterrupt(interrupt.toolCallId)
      if (!approval) return null
      return (
        <button
          type="button"
          onClick={() => {
            approval.approve()
            approval.submit()
          }}
        >
          Approve and continue
        </button>
      )
    }
    function App({ batch }: { batch: PendingInterruptBatch }) {
      const form = useInterruptForm(batch, { messages: history })
      return (
        <InterruptFormProvider form={form} onSubmit={onSubmit}>
          {batch.interrupts.map((i) => (
            <OneClick key={i.id} interrupt={i} />
          ))}
        </InterruptFormProvider>
      )
    }
    const batch = { id: 'b-one', interrupts: [releaseBatch().interrupts[1]!] }
    render(
      <StrictMode>
        <App batch={batch} />
      </StrictMode>,
    )
    fireEvent.click(screen.getByRole('button', { name: 'Approve and continue' }))
    expect(onSubmit).toHaveBeenCalledTimes(1)
    expect(onSubmit).toHaveBeenCalledWith({
      batchId: 'b-one',
      entries: [{ interruptId: 'i-dep', status: 'resolved', payload: { approved: true } }],
    })
  })

  it('renders nothing for a tool call nothing waits on, and nothing outside a provider', () => {
    const Wrap = ({ children }: { children: ReactNode }) => <StrictMode>{children}</StrictMode>
    const { container } = render(
      <Wrap>
        <InlineApproval toolCallId="c-dep" />
        <Screen batch={releaseBatch()} onSubmit={() => undefined} />
      </Wrap>,
    )
    // Only the deploy call's: not the one outside the provider, not the call nothing waits on.
    const shown = container.querySelectorAll('.interlude-inline-approval')
    expect([...shown].map((e) => e.getAttribute('data-interrupt-id'))).toEqual(['i-dep'])
  })
})
