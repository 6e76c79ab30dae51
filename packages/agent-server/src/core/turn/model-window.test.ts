import { describe, expect, it } from 'vitest'
import { InterludeError } from '@interlude/protocol'
import type { Message } from '@interlude/protocol'
import { modelWindow, OMITTED_NOTE_ID, sized } from './model-window.ts'

const user = (id: string, content = id): Message => ({ id, role: 'user', content })
const answer = (id: string, content = id): Message => ({ id, role: 'assistant', content })
const calls = (id: string, ...callIds: string[]): Message => ({
  id,
  role: 'assistant',
  toolCalls: callIds.map((c) => ({ id: c, type: 'function' as const, function: { name: 'f', arguments: '{}' } })),
})
const result = (id: string, toolCallId: string): Message => ({ id, role: 'tool', toolCallId, content: 'r' })
const ids = (messages: readonly Message[]) => messages.map((m) => m.id)
const wide = { maxMessages: 100, maxBytes: 1_000_000 }

describe('modelWindow', () => {
  it('is the whole history when nothing is omitted', () => {
    const history = [user('u1'), answer('a1'), user('u2')].map(sized)
    expect(ids(modelWindow(history, 0, undefined, wide))).toEqual(['u1', 'a1', 'u2'])
  })

  it('keeps the newest messages by count, then the first user message and a note for the rest', () => {
    const history = [user('u1'), answer('a1'), user('u2'), answer('a2'), user('u3'), answer('a3')].map(sized)
    const window = modelWindow(history, 0, sized(history[0]!.message), { maxMessages: 3, maxBytes: 1_000_000 })
    expect(ids(window)).toEqual(['u1', OMITTED_NOTE_ID, 'a2', 'u3', 'a3'])
    expect(window[1]).toMatchObject({
      role: 'system',
      content: '2 earlier messages of this conversation are omitted here.',
    })
  })

  it('counts messages the store did not load (`before`) as omitted', () => {
    const page = [user('u9'), answer('a9')].map(sized)
    const window = modelWindow(page, 7, sized(user('u0')), wide)
    expect(ids(window)).toEqual(['u0', OMITTED_NOTE_ID, 'u9', 'a9'])
    expect(window[1]!.content).toBe('6 earlier messages of this conversation are omitted here.')
  })

  it('never starts with tool results whose call fell outside the window', () => {
    const history = [user('u1'), calls('a1', 'c1', 'c2'), result('t1', 'c1'), result('t2', 'c2'), answer('a2')].map(
      sized,
    )
    const window = modelWindow(history, 0, sized(history[0]!.message), { maxMessages: 3, maxBytes: 1_000_000 })
    // The newest 3 are t1, t2, a2: both results lose their call, so only a2 remains.
    expect(ids(window)).toEqual(['u1', OMITTED_NOTE_ID, 'a2'])
    const wider = modelWindow(history, 0, sized(history[0]!.message), { maxMessages: 4, maxBytes: 1_000_000 })
    expect(ids(wider)).toEqual(['u1', 'a1', 't1', 't2', 'a2'])
  })

  it('bounds bytes from the newest message back, keeping a small first user message within a quarter', () => {
    const history = [user('u1', 'task'), ...Array.from({ length: 10 }, (_, i) => answer(`a${i}`, 'x'.repeat(100)))].map(
      sized,
    )
    const each = history[1]!.bytes
    const first = sized(history[0]!.message)
    const bounds = { maxMessages: 100, maxBytes: 4 * each }
    const window = modelWindow(history, 0, first, bounds)
    // The first user message takes its bytes from the newest messages' share: 3 of them fit beside it.
    expect(ids(window)).toEqual(['u1', OMITTED_NOTE_ID, 'a7', 'a8', 'a9'])
    const bytes = window.filter((m) => m.id !== OMITTED_NOTE_ID).reduce((n, m) => n + sized(m).bytes, 0)
    expect(bytes).toBeLessThanOrEqual(bounds.maxBytes)
    // A first user message larger than a quarter of the window is left out; only the note stands for it.
    const big = sized(user('u1', 'y'.repeat(4 * each)))
    expect(ids(modelWindow(history.slice(1), 1, big, bounds))).toEqual([OMITTED_NOTE_ID, 'a6', 'a7', 'a8', 'a9'])
  })

  it('is THREAD_TOO_LARGE when not even the newest message (or tool round) fits', () => {
    const huge = [user('u1'), answer('a1', 'z'.repeat(5000))].map(sized)
    const tooLarge = (fn: () => unknown) => {
      try {
        fn()
      } catch (error) {
        return InterludeError.isInstance(error) ? error.code : 'other'
      }
      return 'none'
    }
    expect(tooLarge(() => modelWindow(huge, 0, undefined, { maxMessages: 10, maxBytes: 1000 }))).toBe(
      'THREAD_TOO_LARGE',
    )
    const round = [user('u1'), calls('a1', 'c1'), result('t1', 'c1')].map(sized)
    expect(tooLarge(() => modelWindow(round, 0, undefined, { maxMessages: 1, maxBytes: 1_000_000 }))).toBe(
      'THREAD_TOO_LARGE',
    )
    expect(modelWindow([], 0, undefined, wide)).toEqual([])
  })
})
