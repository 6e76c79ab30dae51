// @vitest-environment jsdom
/**
 * Guardrail and budget interrupts (docs/guardrails.md) in <StrictMode>: the form shows what failed and the content in
 * question, or the budget used, and turns the answers into the schemas' payloads without app code.
 */
import { BUDGET_INTERRUPT_REASON, GUARDRAIL_INTERRUPT_REASON } from '@interlude/protocol'
import type { Interrupt } from '@interlude/protocol'
import { cleanup, fireEvent, render, screen, within } from '@testing-library/react'
import { StrictMode } from 'react'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { InterruptForm } from './interrupt-form.tsx'

afterEach(cleanup)

const GUARDRAIL_SCHEMA = {
  type: 'object',
  properties: { action: { type: 'string', enum: ['allow', 'block'] }, note: { type: 'string', maxLength: 2000 } },
  required: ['action'],
  additionalProperties: false,
}

const argsGuardrail: Interrupt = {
  id: 'i-guard',
  reason: GUARDRAIL_INTERRUPT_REASON,
  toolCallId: 'call-deploy',
  message: 'The guardrail "semver" stopped deploy: "vNEXT" is not a version like v2.1.0',
  responseSchema: GUARDRAIL_SCHEMA,
  metadata: {
    guardrail: 'semver',
    on: 'args',
    reason: '"vNEXT" is not a version like v2.1.0',
    toolCallId: 'call-deploy',
    toolName: 'deploy',
    arguments: { version: 'vNEXT', environment: 'staging' },
  },
}

const outputGuardrail: Interrupt = {
  id: 'i-out',
  reason: GUARDRAIL_INTERRUPT_REASON,
  message: 'The guardrail "no-secrets" stopped the answer: it looks like a credential',
  responseSchema: GUARDRAIL_SCHEMA,
  metadata: {
    guardrail: 'no-secrets',
    on: 'output',
    reason: 'it looks like a credential',
    messageId: 'msg-1',
    content: 'user: admin, password: hunter2',
  },
}

const budget: Interrupt = {
  id: 'i-budget',
  reason: BUDGET_INTERRUPT_REASON,
  message: 'This run used 8 of 8 model calls. Extend its budget to go on?',
  responseSchema: {
    type: 'object',
    properties: { extend: { type: 'integer', minimum: 1 } },
    required: ['extend'],
    additionalProperties: false,
  },
  metadata: { kind: 'iterations', used: 8, limit: 8 },
}

describe('<InterruptForm> with guardrail and budget interrupts', () => {
  it('an args guardrail: the guardrail, its reason and the arguments; block with a note is submitted', () => {
    const onSubmit = vi.fn()
    render(
      <StrictMode>
        <InterruptForm batch={{ id: 'b-g', interrupts: [argsGuardrail] }} onSubmit={onSubmit} />
      </StrictMode>,
    )
    expect(screen.getByText(/stopped deploy: "vNEXT" is not a version/)).toBeTruthy()
    const note = screen.getByRole('note', { name: /Stopped by the guardrail semver on deploy/ })
    expect(note.textContent).toContain('"vNEXT" is not a version like v2.1.0')
    expect(within(note).getByText(/"version": "vNEXT"/)).toBeTruthy()
    expect(note.textContent).toContain('The arguments in question')
    const form = screen.getByRole('form')
    fireEvent.click(within(form).getByRole('radio', { name: 'Block' }))
    fireEvent.change(within(form).getByLabelText('Note'), { target: { value: 'not a release' } })
    fireEvent.click(within(form).getByRole('button', { name: 'Submit answers' }))
    expect(onSubmit.mock.calls[0]![0]).toEqual({
      batchId: 'b-g',
      entries: [{ interruptId: 'i-guard', status: 'resolved', payload: { action: 'block', note: 'not a release' } }],
    })
  })

  it('an output guardrail shows the withheld text; allow is submitted', () => {
    const onSubmit = vi.fn()
    render(
      <StrictMode>
        <InterruptForm batch={{ id: 'b-o', interrupts: [outputGuardrail] }} onSubmit={onSubmit} />
      </StrictMode>,
    )
    const note = screen.getByRole('note', { name: /Stopped by the guardrail no-secrets/ })
    expect(note.textContent).toContain('The answer in question')
    expect(note.textContent).toContain('user: admin, password: hunter2')
    const form = screen.getByRole('form')
    fireEvent.click(within(form).getByRole('radio', { name: 'Allow' }))
    fireEvent.click(within(form).getByRole('button', { name: 'Submit answers' }))
    expect(onSubmit.mock.calls[0]![0]).toEqual({
      batchId: 'b-o',
      entries: [{ interruptId: 'i-out', status: 'resolved', payload: { action: 'allow' } }],
    })
  })

  it('a budget: how much was used of what; an extension, or cancel to stop', () => {
    const onSubmit = vi.fn()
    render(
      <StrictMode>
        <InterruptForm batch={{ id: 'b-b', interrupts: [budget] }} onSubmit={onSubmit} />
      </StrictMode>,
    )
    const note = screen.getByRole('note', { name: 'Budget used: 8 of 8 model calls' })
    expect(within(note).getByRole('meter')).toBeTruthy()
    const form = screen.getByRole('form')
    fireEvent.change(within(form).getByLabelText(/Extend/), { target: { value: '2' } })
    fireEvent.click(within(form).getByRole('button', { name: 'Submit answers' }))
    expect(onSubmit.mock.calls[0]![0]).toEqual({
      batchId: 'b-b',
      entries: [{ interruptId: 'i-budget', status: 'resolved', payload: { extend: 2 } }],
    })
  })
})
