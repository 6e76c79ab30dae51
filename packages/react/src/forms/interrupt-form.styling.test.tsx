// @vitest-environment jsdom
import type { Message } from '@interlude/protocol'
import { cleanup, render, screen } from '@testing-library/react'
import { StrictMode } from 'react'
import { afterEach, describe, expect, it } from 'vitest'
import { InterruptForm } from './interrupt-form.tsx'

afterEach(cleanup)

const history: Message[] = [
  {
    id: 'a',
    role: 'assistant',
    toolCalls: [{ id: 'tc', type: 'function', function: { name: 'deploy', arguments: '{"env":"prod"}' } }],
  },
]
const batch = { id: 'b', interrupts: [{ id: 'i', reason: 'tool_call', toolCallId: 'tc' }] }

describe('<InterruptForm>: titles and styling hooks', () => {
  it('titles a tool call without a message by the tool and its arguments, not by "tool_call"', () => {
    render(
      <StrictMode>
        <InterruptForm batch={batch} messages={history} onSubmit={() => undefined} />
      </StrictMode>,
    )
    expect(screen.getByRole('group', { name: 'Run deploy with {"env":"prod"}?' })).toBeTruthy()
    expect(screen.queryByText('tool_call')).toBeNull()
  })

  it('keeps its interlude-* classes and adds the caller’s className and classNames', () => {
    const { container } = render(
      <StrictMode>
        <InterruptForm
          batch={batch}
          messages={history}
          onSubmit={() => undefined}
          className="card"
          classNames={{ title: 'h', interrupt: 'q', legend: 'l', actions: 'row' }}
        />
      </StrictMode>,
    )
    const form = container.querySelector('form')!
    expect(form.className).toBe('interlude-interrupt-form card')
    expect(form.querySelector('h2')!.className).toBe('interlude-interrupt-form-title h')
    const fieldset = form.querySelector('fieldset')!
    expect(fieldset.className).toBe('interlude-interrupt q')
    expect(fieldset.dataset.reason).toBe('tool_call')
    expect(fieldset.querySelector('legend')!.className).toBe('interlude-interrupt-title l')
    expect(form.querySelector('.interlude-actions')!.className).toBe('interlude-actions row')
  })
})
