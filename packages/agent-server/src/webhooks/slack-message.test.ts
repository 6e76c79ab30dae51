import { describe, expect, it } from 'vitest'
import { buttonValue, parseButtonValue, slackApprovalMessage, slackButtonKey } from './slack-message.ts'

/** The Block Kit approval message stays within Slack's limits whatever the model put in a call. */
describe('slackApprovalMessage', () => {
  it('keeps every section under 3,000 characters, also when escaping grows the text, and cuts no entity', () => {
    const message = '<&>'.repeat(2000)
    const args = { note: '<'.repeat(3000) }
    const blocks = slackApprovalMessage(slackButtonKey('secret'), {
      threadId: 'alice\u0000t1',
      owner: 'alice',
      runId: 'r1',
      interrupts: [],
      expiresAt: Date.parse('2030-01-01T00:00:00Z'),
      stored: [
        {
          kind: 'approval',
          toolCallId: 'c1',
          toolName: 'deploy',
          interrupt: { id: 'int_1', reason: 'tool_call', message, metadata: { arguments: args } },
        },
      ],
    }).blocks as { type: string; text?: { text: string } }[]
    const sections = blocks.filter((b) => b.type === 'section').map((b) => b.text!.text)
    expect(sections.length).toBeGreaterThanOrEqual(2)
    for (const text of sections) {
      expect(text.length).toBeLessThanOrEqual(3000)
      expect(text).not.toMatch(/&[a-z]*\n…/)
    }
    expect(sections.some((t) => t.includes('&lt;&lt;'))).toBe(true)
  })
})

describe('button values', () => {
  const key = slackButtonKey('the signing secret')
  const value = { threadId: 'alice\u0000t1', interruptId: 'int_1', action: 'approve' } as const

  it('read back what this server signed, and nothing signed under another key, changed or unsigned', () => {
    const signed = buttonValue(key, value)
    expect(parseButtonValue(key, signed)).toEqual(value)
    expect(parseButtonValue(slackButtonKey('another secret'), signed)).toBeUndefined()
    const wire = JSON.parse(signed) as Record<string, string>
    const other = (changes: Record<string, unknown>) => JSON.stringify({ ...wire, ...changes })
    for (const forged of [
      other({ a: 'deny' }),
      other({ i: 'int_2' }),
      other({ t: 'bob\u0000t1' }),
      other({ m: undefined }),
      other({ m: '' }),
      other({ m: wire.m!.slice(0, -2) }),
      other({ m: 7 }),
      'not json',
      'null',
    ]) {
      expect(parseButtonValue(key, forged)).toBeUndefined()
    }
  })
})
