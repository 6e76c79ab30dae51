import type { Interrupt, Message } from '@interlude/protocol'
import { describe, expect, it } from 'vitest'
import { interruptTitle } from './interrupt-title.ts'

const history: Message[] = [
  { id: 'u', role: 'user', content: 'ship it' },
  {
    id: 'a',
    role: 'assistant',
    toolCalls: [{ id: 'tc', type: 'function', function: { name: 'deploy', arguments: '{ "env": "prod" }' } }],
  },
]

describe('interruptTitle', () => {
  it("prefers the server's message", () => {
    expect(interruptTitle({ id: 'i', reason: 'tool_call', toolCallId: 'tc', message: 'Deploy?' }, history)).toBe(
      'Deploy?',
    )
  })
  it('names the tool and its arguments from the history instead of the raw reason', () => {
    expect(interruptTitle({ id: 'i', reason: 'tool_call', toolCallId: 'tc' }, history)).toBe(
      'Run deploy with {"env":"prod"}?',
    )
  })
  it('falls back to metadata, then to a generic question; other reasons stay as they are', () => {
    const fromMeta: Interrupt = { id: 'i', reason: 'tool_call', toolCallId: 'x', metadata: { toolName: 'wipe' } }
    expect(interruptTitle(fromMeta)).toBe('Run wipe?')
    const long: Interrupt = { ...fromMeta, metadata: { toolName: 'wipe', arguments: { path: 'x'.repeat(300) } } }
    expect(interruptTitle(long)).toMatch(/^Run wipe with \{"path":"x+…\?$/)
    expect(interruptTitle(long).length).toBeLessThan(140)
    expect(interruptTitle({ id: 'i', reason: 'tool_call', toolCallId: 'x' })).toBe('Run a tool call?')
    expect(interruptTitle({ id: 'i', reason: 'confirmation' })).toBe('confirmation')
  })
})
