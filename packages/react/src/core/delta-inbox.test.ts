import type { AgUiEvent } from '@interlude/protocol'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { DeltaInbox } from './delta-inbox.ts'

beforeEach(() => {
  vi.useFakeTimers()
})
afterEach(() => {
  vi.useRealTimers()
})

const text = (delta: string) => ({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'm', delta }) as AgUiEvent

describe('DeltaInbox', () => {
  it('collects a burst and reports it due once, throttleMs after its first event', () => {
    const due = vi.fn()
    const inbox = new DeltaInbox(() => 16, due)
    inbox.push(1, text('a'), '1')
    vi.advanceTimersByTime(10)
    inbox.push(1, text('b'), undefined)
    inbox.push(1, text('c'), '3')
    vi.advanceTimersByTime(5)
    expect(due).not.toHaveBeenCalled()
    vi.advanceTimersByTime(1)
    expect(due).toHaveBeenCalledTimes(1)
    expect(inbox.take()).toEqual({ gen: 1, events: [text('a'), text('b'), text('c')], lastEventId: '3' })
    expect(inbox.pending).toBe(false)
  })

  it('take() empties the inbox and disarms the timer', () => {
    const due = vi.fn()
    const inbox = new DeltaInbox(() => 16, due)
    expect(inbox.take()).toBeUndefined()
    inbox.push(1, text('a'), undefined)
    expect(inbox.pending).toBe(true)
    expect(inbox.take()).toEqual({ gen: 1, events: [text('a')], lastEventId: undefined })
    vi.advanceTimersByTime(100)
    expect(due).not.toHaveBeenCalled()
    expect(inbox.take()).toBeUndefined()
  })

  it('reads throttleMs when a burst starts', () => {
    let throttle = 16
    const due = vi.fn()
    const inbox = new DeltaInbox(() => throttle, due)
    throttle = 50
    inbox.push(1, text('a'), undefined)
    vi.advanceTimersByTime(49)
    expect(due).not.toHaveBeenCalled()
    vi.advanceTimersByTime(1)
    expect(due).toHaveBeenCalledTimes(1)
  })

  it('an event of another run replaces the batch; drop() forgets it', () => {
    const due = vi.fn()
    const inbox = new DeltaInbox(() => 16, due)
    inbox.push(1, text('old'), '7')
    inbox.push(2, text('new'), undefined)
    expect(inbox.take()).toEqual({ gen: 2, events: [text('new')], lastEventId: undefined })
    inbox.push(2, text('x'), undefined)
    inbox.drop()
    vi.advanceTimersByTime(100)
    expect(due).not.toHaveBeenCalled()
    expect(inbox.take()).toBeUndefined()
  })
})
