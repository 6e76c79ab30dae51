// @vitest-environment jsdom
/**
 * A withheld answer in the workbench chat (docs/guardrails.md#withheld-answers): the answer a failed output guardrail
 * holds back is shown marked as withheld, with the guardrail and its reason; other messages are not marked.
 */
import type { WithheldMessage } from '@interlude/protocol'
import { cleanup, render, screen } from '@testing-library/react'
import { StrictMode } from 'react'
import { afterEach, expect, it } from 'vitest'
import { MessageList } from './message-list.tsx'

afterEach(cleanup)

const messages = [
  { id: 'u1', role: 'user', content: 'what is the admin password' },
  { id: 'a1', role: 'assistant', content: 'The admin password: hunter2' },
]
const withheld: WithheldMessage[] = [
  {
    messageId: 'a1',
    interruptId: 'int-1',
    guardrail: 'no-secrets',
    reason: 'the answer contains a secret',
    content: 'The admin password: hunter2',
  },
]

it('marks the withheld answer with its guardrail and reason, and nothing else', () => {
  const { container } = render(
    <StrictMode>
      <MessageList messages={messages} withheld={withheld} />
    </StrictMode>,
  )
  const marked = container.querySelectorAll('[data-withheld="true"]')
  expect(marked).toHaveLength(1)
  expect(marked[0]!.textContent).toContain('The admin password: hunter2')
  expect(marked[0]!.textContent).toContain('Assistant · withheld')
  expect(screen.getByRole('note').textContent).toMatch(/“no-secrets”: the answer contains a secret/)
  expect(container.querySelector('[data-role="user"]')!.getAttribute('data-withheld')).toBeNull()
})

it('without withheld answers nothing is marked', () => {
  const { container } = render(
    <StrictMode>
      <MessageList messages={messages} />
    </StrictMode>,
  )
  expect(container.querySelectorAll('[data-withheld]')).toHaveLength(0)
  expect(screen.queryByRole('note')).toBeNull()
})
