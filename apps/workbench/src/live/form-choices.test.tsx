// @vitest-environment jsdom
import { InterruptForm } from '@interlude/react'
import { cleanup, fireEvent, render, screen, within } from '@testing-library/react'
import { afterEach, describe, expect, it } from 'vitest'
import { readFormChoices } from './form-choices.ts'

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
const batch = {
  id: 'b1',
  interrupts: [
    {
      id: 'i-pub',
      reason: 'tool_call',
      toolCallId: 'c-pub',
      message: 'Publish release v2.1?',
      responseSchema: approval(),
    },
    {
      id: 'i-dep',
      reason: 'tool_call',
      toolCallId: 'c-dep',
      message: 'Deploy v2.1 to production?',
      responseSchema: approval(deployArgs),
    },
  ],
}
const messages = [
  {
    id: 'a1',
    role: 'assistant' as const,
    content: 'Plan',
    toolCalls: [
      {
        id: 'c-pub',
        type: 'function' as const,
        function: { name: 'publish_release', arguments: '{"version":"v2.1"}' },
      },
      {
        id: 'c-dep',
        type: 'function' as const,
        function: { name: 'deploy', arguments: '{"version":"v2.1","environment":"production"}' },
      },
    ],
  },
]

describe('readFormChoices over <InterruptForm>', () => {
  it('reads each interrupt’s decision and fields in batch order', () => {
    const { container } = render(<InterruptForm batch={batch} messages={messages} onSubmit={() => undefined} />)
    expect(readFormChoices(container, ['i-pub', 'i-dep'])).toEqual({ 'i-pub': {}, 'i-dep': {} })

    const [publish, deploy] = screen
      .getAllByRole('group')
      .filter((g) => g.tagName === 'FIELDSET' && g.parentElement?.closest('fieldset') === null)
    fireEvent.click(within(publish!).getByLabelText('Deny'))
    fireEvent.click(within(deploy!).getByLabelText('Approve'))
    fireEvent.click(within(deploy!).getByLabelText('Edit arguments'))
    fireEvent.change(within(deploy!).getByLabelText('Environment'), { target: { value: '0' } })

    const choices = readFormChoices(container, ['i-pub', 'i-dep'])
    expect(choices['i-pub']).toMatchObject({ decision: 'deny' })
    expect(choices['i-dep']).toMatchObject({
      decision: 'approve',
      fields: { 'Edit arguments': true, Version: 'v2.1', Environment: 'staging' },
    })
  })

  it('ignores fieldsets beyond the batch', () => {
    const { container } = render(<InterruptForm batch={batch} onSubmit={() => undefined} />)
    expect(Object.keys(readFormChoices(container, ['only-one']))).toEqual(['only-one'])
  })
})
