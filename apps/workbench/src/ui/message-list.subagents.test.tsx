// @vitest-environment jsdom
/**
 * Subagent activity in the workbench chat (docs/client-contract.md#subagents): shown under the parent's tool call
 * that runs it, attributed ("auditor: …"), collapsed by default and opened by keyboard; never as a parent message.
 */
import type { SubagentActivities, SubagentActivity } from '@interlude/react'
import { cleanup, fireEvent, render, screen, within } from '@testing-library/react'
import { StrictMode } from 'react'
import { afterEach, describe, expect, it } from 'vitest'
import { MessageList } from './message-list.tsx'

afterEach(cleanup)

/** A subagent's own messages: its text, then its sign_off call (with a result when `result` is given). */
const said = (text: string, result?: string): SubagentActivity['messages'] => [
  {
    id: 's-m1',
    role: 'assistant',
    content: text,
    toolCalls: [{ id: 'sc-1', type: 'function', function: { name: 'sign_off', arguments: '{"version":"v2.1"}' } }],
  },
  ...(result === undefined ? [] : [{ id: 's-m2', role: 'tool' as const, toolCallId: 'sc-1', content: result }]),
]

const activity = (over: Partial<SubagentActivity>): SubagentActivity => ({
  subagentRunId: 'sub_1',
  agent: 'auditor',
  parentToolCallId: 'call-audit',
  status: 'running',
  messages: said('Checking the changelog of v2.1.'),
  ...over,
})

const messages = [
  { id: 'u1', role: 'user', content: 'audit v2.1' },
  {
    id: 'a1',
    role: 'assistant',
    content: 'Asking the auditor.',
    toolCalls: [{ id: 'call-audit', type: 'function', function: { name: 'audit', arguments: '{"version":"v2.1"}' } }],
  },
]

describe('<MessageList> with subagents', () => {
  it('shows a subagent under its parent tool call, attributed and collapsed until opened', () => {
    const subagents: SubagentActivities = {
      sub_1: activity({}),
      sub_2: activity({
        subagentRunId: 'sub_2',
        agent: 'reviewer',
        parentToolCallId: 'gone',
        messages: [{ id: 'r1', role: 'assistant', content: 'Second look.' }],
      }),
    }
    render(
      <StrictMode>
        <MessageList messages={messages} subagents={subagents} busy />
      </StrictMode>,
    )
    const call = document.querySelector<HTMLElement>('[data-tool-call-id="call-audit"]')!
    const details = call.querySelector('details')!
    expect(details.getAttribute('data-subagent-run-id')).toBe('sub_1')
    expect(details.open).toBe(false) // collapsed by default
    const summary = within(details).getByText('auditor')
    expect(details.querySelector('summary')!.textContent).toBe('auditor · working… · 1 tool call')
    expect(details.querySelector('.subagent-text')!.textContent).toBe('auditor: Checking the changelog of v2.1.')
    fireEvent.click(summary.closest('summary')!)
    expect(details.open).toBe(true)
    expect(within(details).getByRole('list', { name: "auditor's tool calls" }).textContent).toContain('sign_off')

    // Not a parent message: the conversation's assistant text is the parent's alone.
    const roles = screen.getAllByRole('listitem').map((li) => li.getAttribute('data-role'))
    expect(roles.filter((r) => r === 'assistant')).toHaveLength(1)
    // A subagent whose parent call is not in the history is still shown, attributed, after the conversation.
    const orphan = document.querySelector<HTMLElement>('[data-role="subagent"]')!
    expect(orphan.querySelector('.subagent-text')!.textContent).toBe('reviewer: Second look.')
  })

  it('shows finished and failed runs with their results; no subagents renders nothing extra', () => {
    const done = activity({ status: 'finished', messages: said('Signed.', '{"signed":true}') })
    const { rerender } = render(<MessageList messages={messages} subagents={{ sub_1: done }} />)
    expect(document.querySelector('summary')!.textContent).toBe('auditor · done · 1 tool call')
    expect(document.querySelector('.subagent-tools')!.textContent).toContain('{"signed":true}')
    const failed = activity({ status: 'failed', messages: [{ id: 'f', role: 'assistant', content: 'Gave up.' }] })
    rerender(<MessageList messages={messages} subagents={{ sub_1: failed }} />)
    expect(document.querySelector('summary')!.textContent).toBe('auditor · failed')
    rerender(<MessageList messages={messages} />)
    expect(document.querySelector('details')).toBeNull()
  })
})
