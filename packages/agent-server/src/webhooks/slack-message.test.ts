import { describe, expect, it } from 'vitest'
import { slackApprovalMessage } from './slack-message.ts'

/** The Block Kit approval message stays within Slack's limits whatever the model put in a call. */
describe('slackApprovalMessage', () => {
  it('keeps every section under 3,000 characters, also when escaping grows the text, and cuts no entity', () => {
    const message = '<&>'.repeat(2000)
    const args = { note: '<'.repeat(3000) }
    const blocks = slackApprovalMessage({
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
