// @vitest-environment jsdom
import { cleanup, fireEvent, render, screen, within } from '@testing-library/react'
import { StrictMode } from 'react'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { deepFreeze } from '../core/immutable.ts'
import type { PendingInterruptBatch } from '../core/types.ts'
import { approval, deployArgs, history } from '../test-utils/form-fixtures.ts'
import { argumentChanges } from './call-arguments.tsx'
import { InterruptForm } from './interrupt-form.tsx'
import { fromLocalInput, toLocalInput } from './text-field.tsx'

afterEach(cleanup)

/** A question that uses every presentation keyword of docs/client-contract.md#form-helpers. */
const RICH_SCHEMA = {
  type: 'object',
  title: 'Maintenance window',
  description: 'When and how the release goes out.',
  properties: {
    strategy: {
      title: 'Rollout strategy',
      description: 'How traffic moves to the new version.',
      oneOf: [
        { const: 'canary', title: 'Canary (5% first)', description: 'Safest; takes an hour.' },
        { const: 'blue-green', title: 'Blue/green switch' },
      ],
      'x-interlude-widget': 'radio',
    },
    region: {
      title: 'Region',
      anyOf: [
        { const: 'eu', title: 'Europe' },
        { const: 'us', title: 'United States' },
      ],
    },
    day: { type: 'string', format: 'date', title: 'Day' },
    startsAt: { type: 'string', format: 'date-time', title: 'Starts at' },
    contact: { type: 'string', format: 'email', title: 'Contact' },
    runbook: { type: 'string', format: 'uri', title: 'Runbook' },
    notes: {
      type: 'string',
      title: 'Notes',
      'x-interlude-widget': 'textarea',
      description: 'Anything on-call should know.',
    },
    notify: { type: 'boolean', title: 'Notify the team', 'x-interlude-widget': 'radio' },
  },
  required: ['strategy', 'region', 'day', 'startsAt', 'contact'],
  additionalProperties: false,
}

const batch = (responseSchema: object, id = 'b-rich'): PendingInterruptBatch =>
  deepFreeze({ id, interrupts: [{ id: 'q', reason: 'input_required', message: 'Plan the rollout', responseSchema }] })

function renderForm(b: PendingInterruptBatch, onSubmit = vi.fn()) {
  render(
    <StrictMode>
      <InterruptForm batch={b} onSubmit={onSubmit} messages={history} />
    </StrictMode>,
  )
  return onSubmit
}

describe('<InterruptForm> presentation', () => {
  it('labels oneOf/anyOf choices, picks controls by format and widget, and links descriptions', () => {
    renderForm(batch(RICH_SCHEMA))
    expect(screen.getByText('When and how the release goes out.')).toBeTruthy()

    // oneOf + radio widget: a named group of labelled radios; the option description is linked.
    const strategy = screen.getByRole('group', { name: 'Rollout strategy' })
    const canary = within(strategy).getByRole('radio', { name: 'Canary (5% first)' })
    expect(within(strategy).getByRole('radio', { name: 'Blue/green switch' })).toBeTruthy()
    expect(document.getElementById(canary.getAttribute('aria-describedby')!)?.textContent).toBe(
      'Safest; takes an hour.',
    )
    const groupDescription = strategy.getAttribute('aria-describedby')!
    expect(document.getElementById(groupDescription)?.textContent).toBe('How traffic moves to the new version.')

    // anyOf of const without a widget: a select showing the titles.
    const region = screen.getByLabelText('Region') as HTMLSelectElement
    expect([...region.options].map((o) => o.text)).toEqual(['Choose…', 'Europe', 'United States'])

    expect((screen.getByLabelText('Day') as HTMLInputElement).type).toBe('date')
    expect((screen.getByLabelText('Starts at') as HTMLInputElement).type).toBe('datetime-local')
    expect((screen.getByLabelText('Contact') as HTMLInputElement).type).toBe('email')
    expect((screen.getByLabelText('Runbook') as HTMLInputElement).type).toBe('url')
    const notes = screen.getByLabelText('Notes')
    expect(notes.tagName).toBe('TEXTAREA')
    expect(document.getElementById(notes.getAttribute('aria-describedby')!)?.textContent).toBe(
      'Anything on-call should know.',
    )
    const notify = screen.getByRole('group', { name: 'Notify the team' })
    expect(
      within(notify)
        .getAllByRole('radio')
        .map((r) => (r as HTMLInputElement).labels?.[0]?.textContent),
    ).toEqual(['Yes', 'No', 'No answer'])
  })

  it('submits the schema values (const values, RFC 3339 date-time) and shows format errors', () => {
    const onSubmit = renderForm(batch(RICH_SCHEMA))
    fireEvent.click(screen.getByRole('radio', { name: 'Canary (5% first)' }))
    fireEvent.change(screen.getByLabelText('Region'), { target: { value: '1' } })
    fireEvent.change(screen.getByLabelText('Day'), { target: { value: '2026-12-01' } })
    fireEvent.change(screen.getByLabelText('Starts at'), { target: { value: '2026-12-01T10:30' } })
    fireEvent.change(screen.getByLabelText('Contact'), { target: { value: 'not an email' } })
    fireEvent.click(screen.getByRole('radio', { name: 'No' }))
    fireEvent.click(screen.getByRole('button', { name: 'Submit answers' }))
    expect(onSubmit).not.toHaveBeenCalled()
    const contact = screen.getByLabelText('Contact')
    expect(contact.getAttribute('aria-invalid')).toBe('true')

    fireEvent.change(contact, { target: { value: 'oncall@example.com' } })
    fireEvent.click(screen.getByRole('button', { name: 'Submit answers' }))
    expect(onSubmit).toHaveBeenCalledTimes(1)
    expect(onSubmit.mock.calls[0]![0].entries[0].payload).toEqual({
      strategy: 'canary',
      region: 'us',
      day: '2026-12-01',
      startsAt: new Date('2026-12-01T10:30').toISOString(),
      contact: 'oncall@example.com',
      notify: false,
    })
  })

  it('shows the call arguments of an approval and a diff of the edit', () => {
    const b = deepFreeze({
      id: 'b-dep',
      interrupts: [
        {
          id: 'i-dep',
          reason: 'tool_call',
          toolCallId: 'c-dep',
          message: 'Deploy v2.1 to staging?',
          responseSchema: { ...approval(deployArgs), description: 'Deploys change production traffic.' },
        },
      ],
    }) as PendingInterruptBatch
    renderForm(b)
    expect(screen.getByText('Deploys change production traffic.')).toBeTruthy()
    const args = document.querySelector<HTMLElement>('dl.interlude-call-args')!
    expect(within(args).getByText('version').nextElementSibling?.textContent).toBe('v2.1')
    expect(within(args).getByText('environment').nextElementSibling?.textContent).toBe('staging')
    expect(screen.queryByText('Your changes')).toBeNull()

    fireEvent.click(screen.getByLabelText('Approve'))
    fireEvent.click(screen.getByLabelText('Edit arguments'))
    fireEvent.change(screen.getByLabelText('Environment'), { target: { value: '1' } })
    const diff = screen.getByRole('status')
    expect(diff.textContent).toContain('Your changes')
    expect(within(diff).getByText('staging').tagName).toBe('DEL')
    expect(within(diff).getByText('production').tagName).toBe('INS')
  })

  it('ignores unknown keywords: the form renders and answers as without them', () => {
    const onSubmit = renderForm(
      batch({
        type: 'object',
        'x-vendor-hint': { deep: true },
        $comment: 'ignored',
        properties: {
          name: { type: 'string', 'x-ui-order': 3, format: 'hostname-ish', 'x-interlude-widget': 'stars' },
          size: { type: 'integer', deprecated: true, examples: [1], 'x-unit': 'pods' },
        },
        required: ['name'],
        unevaluatedProperties: false,
      }),
    )
    expect((screen.getByLabelText('Name') as HTMLInputElement).type).toBe('text')
    fireEvent.change(screen.getByLabelText('Name'), { target: { value: 'web-1' } })
    fireEvent.change(screen.getByLabelText('Size'), { target: { value: '3' } })
    fireEvent.click(screen.getByRole('button', { name: 'Submit answers' }))
    expect(onSubmit.mock.calls.at(-1)?.[0].entries[0]).toEqual({
      interruptId: 'q',
      status: 'resolved',
      payload: { name: 'web-1', size: 3 },
    })
  })

  it('renders keywords of the wrong type as if they were absent (no crash)', () => {
    renderForm(
      batch({
        type: 'object',
        title: 42,
        description: ['not', 'text'],
        properties: { pick: { oneOf: 'nope', title: 'Pick', type: 'string' }, broken: 'not a schema' },
        required: 'pick',
      }),
    )
    expect(screen.getByText('Plan the rollout')).toBeTruthy()
    expect((screen.getByLabelText('Pick') as HTMLInputElement).type).toBe('text')
    expect(screen.queryByLabelText('Broken')).toBeNull()
  })
})

describe('presentation helpers', () => {
  it('converts between datetime-local and RFC 3339', () => {
    const iso = fromLocalInput('2026-12-01T10:30')!
    expect(iso).toMatch(/^2026-12-0[12]T\d\d:30:00\.000Z$/)
    expect(toLocalInput(iso)).toBe('2026-12-01T10:30')
    expect(fromLocalInput('')).toBeUndefined()
    expect(toLocalInput('yesterday')).toBe('')
  })

  it('lists changed, added and removed arguments', () => {
    expect(argumentChanges({ a: 1, b: 2, c: 3 }, { a: 1, b: 5, d: 4 })).toEqual([
      { key: 'b', before: 2, after: 5 },
      { key: 'c', before: 3, after: undefined },
      { key: 'd', before: undefined, after: 4 },
    ])
    expect(argumentChanges('x', 'x')).toEqual([])
  })
})

describe('remember in an approval (docs/approvals.md#remembered-permissions)', () => {
  it('offers the allowed scopes once approved, defaults to just this once, and sends the chosen scope', () => {
    const b = deepFreeze({
      id: 'b-pub',
      interrupts: [
        {
          id: 'i-pub',
          reason: 'tool_call',
          toolCallId: 'c-pub',
          message: 'Publish release v2.1?',
          responseSchema: {
            ...approval(),
            properties: { ...approval().properties, remember: { type: 'string', enum: ['thread'] } },
          },
        },
      ],
    }) as PendingInterruptBatch
    const onSubmit = renderForm(b)
    expect(screen.queryByRole('group', { name: 'Remember this approval' })).toBeNull()
    fireEvent.click(screen.getByLabelText('Approve'))
    const group = screen.getByRole('group', { name: 'Remember this approval' })
    expect(within(group).getByRole('radio', { name: 'Just this once' })).toHaveProperty('checked', true)
    fireEvent.click(within(group).getByRole('radio', { name: 'Always in this conversation' }))
    fireEvent.click(screen.getByRole('button', { name: 'Submit answers' }))
    expect(onSubmit.mock.calls.at(-1)?.[0].entries[0].payload).toEqual({ approved: true, remember: 'thread' })

    fireEvent.click(within(group).getByRole('radio', { name: 'Just this once' }))
    fireEvent.click(screen.getByRole('button', { name: 'Submit answers' }))
    expect(onSubmit.mock.calls.at(-1)?.[0].entries[0].payload).toEqual({ approved: true })
  })
})
