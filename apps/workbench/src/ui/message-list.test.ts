import { describe, expect, it } from 'vitest'
import { resultState } from './message-list.tsx'

const tool = (content: unknown, error?: string) => ({
  role: 'tool',
  toolCallId: 'c1',
  content: typeof content === 'string' ? content : JSON.stringify(content),
  ...(error === undefined ? {} : { error }),
})

describe('tool result states', () => {
  it('shows cancelled as cancelled, not denied', () => {
    expect(resultState(tool({ status: 'cancelled', message: 'No result arrived before the next message.' }))).toBe(
      'cancelled',
    )
    expect(resultState(tool('The call was cancelled.'))).toBe('cancelled')
  })

  it('shows an effect with an unknown outcome as unknown, not failed', () => {
    expect(resultState(tool({ status: 'unknown', error: 'The outcome is unknown.' }))).toBe('unknown')
  })

  it('keeps denials, failures and results apart', () => {
    expect(resultState(tool({ status: 'denied', reason: 'expired' }))).toBe('denied')
    expect(resultState(tool({ approved: false }))).toBe('denied')
    expect(resultState(tool({ status: 'error', error: 'boom' }))).toBe('failed')
    expect(resultState(tool('not json', 'handler threw'))).toBe('failed')
    expect(resultState(tool({ deployed: true }))).toBe('done')
    expect(resultState(undefined)).toBeUndefined()
  })
})
