// @vitest-environment jsdom
import type { Interrupt } from '@interlude/protocol'
import { InterruptForm } from '@interlude/react'
import type { InterruptDrafts } from '@interlude/react'
import { cleanup, fireEvent, render, screen, within } from '@testing-library/react'
import { StrictMode } from 'react'
import { afterEach, describe, expect, it } from 'vitest'
import { draftChoices } from './draft-choices.ts'

afterEach(cleanup)

const approval = (editedArgs?: object) => ({
  type: 'object',
  properties: { approved: { type: 'boolean' }, ...(editedArgs ? { editedArgs } : {}), reason: { type: 'string' } },
  required: ['approved'],
  additionalProperties: false,
})
const deployArgs = {
  type: 'object',
  properties: { version: { type: 'string' }, environment: { type: 'string', enum: ['staging', 'production'] } },
  required: ['version', 'environment'],
  additionalProperties: false,
}
const toolCall = (id: string, toolCallId: string, message: string, edits?: object) => ({
  id,
  reason: 'tool_call',
  toolCallId,
  message,
  responseSchema: approval(edits),
})
const batch = {
  id: 'b1',
  interrupts: [
    toolCall('i-pub', 'c-pub', 'Publish release v2.1?'),
    toolCall('i-dep', 'c-dep', 'Deploy v2.1 to production?', deployArgs),
  ],
}
const call = (id: string, name: string, args: object) => ({
  id,
  type: 'function' as const,
  function: { name, arguments: JSON.stringify(args) },
})
const messages = [
  {
    id: 'a1',
    role: 'assistant' as const,
    content: 'Plan',
    toolCalls: [
      call('c-pub', 'publish_release', { version: 'v2.1' }),
      call('c-dep', 'deploy', { version: 'v2.1', environment: 'production' }),
    ],
  },
]

const ask = (responseSchema?: object): Interrupt =>
  (responseSchema === undefined
    ? { id: 'i-ask', reason: 'input_required', message: 'Which?' }
    : { id: 'i-ask', reason: 'input_required', message: 'Which?', responseSchema }) as Interrupt

describe('draftChoices from <InterruptForm> drafts', () => {
  it('records each interrupt’s decision and fields in batch order, as the form shows them', () => {
    const reported: InterruptDrafts[] = []
    render(
      <StrictMode>
        <InterruptForm
          batch={batch}
          messages={messages}
          onSubmit={() => undefined}
          onDraftsChange={(drafts) => reported.push(drafts)}
        />
      </StrictMode>,
    )
    expect(reported).toEqual([]) // opening a batch is not a change
    expect(draftChoices(batch.interrupts, {})).toEqual({ 'i-pub': {}, 'i-dep': {} })

    const [publish, deploy] = screen
      .getAllByRole('group')
      .filter((g) => g.tagName === 'FIELDSET' && g.parentElement?.closest('fieldset') === null)
    fireEvent.click(within(publish!).getByLabelText('Deny'))
    fireEvent.click(within(deploy!).getByLabelText('Approve'))
    expect(draftChoices(batch.interrupts, reported.at(-1)!)).toEqual({
      'i-pub': { decision: 'deny' },
      'i-dep': { decision: 'approve', fields: { 'Edit arguments': false } },
    })
    fireEvent.click(within(deploy!).getByLabelText('Edit arguments'))
    fireEvent.change(within(deploy!).getByLabelText('Environment'), { target: { value: '0' } })
    fireEvent.change(within(publish!).getByLabelText('Reason'), { target: { value: 'not yet' } })

    expect(reported).toHaveLength(5)
    expect(draftChoices(batch.interrupts, reported.at(-1)!)).toEqual({
      'i-pub': { decision: 'deny', fields: { Reason: 'not yet' } },
      'i-dep': {
        decision: 'approve',
        fields: { 'Edit arguments': true, Version: 'v2.1', Environment: 'staging' },
      },
    })
    fireEvent.click(screen.getByRole('button', { name: 'Cancel all' }))
    expect(draftChoices(batch.interrupts, reported.at(-1)!)).toEqual({
      'i-pub': { decision: 'cancel' },
      'i-dep': { decision: 'cancel' },
    })
  })

  it('records questions by their fields, with the cancel switch', () => {
    const schema = {
      type: 'object',
      properties: {
        environment: { type: 'string', enum: ['staging', 'production'] },
        urgent: { type: 'boolean' },
        replicas: { type: 'integer' },
        window: { type: 'object', properties: { start_hour: { type: 'number', title: 'From' } } },
        tags: { type: 'array' },
      },
    }
    const payload = { environment: 'production', urgent: false, replicas: 2, window: { start_hour: 9 }, tags: ['a'] }
    expect(draftChoices([ask(schema)], { 'i-ask': { status: 'resolved', payload } })).toEqual({
      'i-ask': {
        fields: {
          Environment: 'production',
          Urgent: 'No',
          Replicas: '2',
          From: '9',
          'Tags (JSON)': '[\n  "a"\n]',
          'Cancel this question': false,
        },
      },
    })
    expect(draftChoices([ask(schema)], {})).toEqual({
      'i-ask': { fields: { Environment: null, Urgent: null, 'Cancel this question': false } },
    })
    expect(draftChoices([ask()], { 'i-ask': { status: 'cancelled' } })).toEqual({
      'i-ask': { fields: { 'Cancel this question': true } },
    })
    expect(draftChoices([ask()], { 'i-ask': { status: 'resolved', payload: 'blue' } })).toEqual({
      'i-ask': { fields: { Answer: 'blue', 'Cancel this question': false } },
    })
  })
})
