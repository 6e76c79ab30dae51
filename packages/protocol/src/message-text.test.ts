import { describe, expect, it } from 'vitest'
import { messageText } from './message-text.ts'

describe('messageText', () => {
  it('reads strings, joins text parts and ignores everything else', () => {
    expect(messageText({ content: 'hi' })).toBe('hi')
    expect(messageText({ content: undefined })).toBe('')
    expect(
      messageText({
        content: [
          { type: 'text', text: 'look' },
          { type: 'binary', mimeType: 'image/png', data: 'AAAA' },
          { type: 'text', text: 'at this' },
        ],
      }),
    ).toBe('look\nat this')
    expect(messageText({ content: [{ type: 'text' }, null, 7] })).toBe('')
  })
})
