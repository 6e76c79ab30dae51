import { describe, expect, it } from 'vitest'
import { EventHub } from './event-hub.ts'

describe('EventHub lost runs', () => {
  it('remembers a lost run for late readers until any event of that run is committed, and wakes the thread', () => {
    const hub = new EventHub()
    const wakes: number[] = []
    hub.subscribe('t', (events) => wakes.push(events.length))
    hub.lose('t', 'r', 'STORE_UNAVAILABLE')
    expect(wakes).toEqual([0])
    expect(hub.lostCode('t', 'r')).toBe('STORE_UNAVAILABLE')
    expect(hub.lostCode('t', 'other')).toBeUndefined()
    hub.publish('t', [{ seq: 9, runId: 'other', type: 'RUN_STARTED', json: '{}' }])
    expect(hub.lostCode('t', 'r')).toBe('STORE_UNAVAILABLE')
    // Recovery's end (or a continuation) of the run supersedes the notice.
    hub.publish('t', [{ seq: 10, runId: 'r', type: 'TOOL_CALL_RESULT', json: '{}' }])
    expect(hub.lostCode('t', 'r')).toBeUndefined()
  })

  it('forgets the oldest lost runs beyond 1000, and taps see every publish', () => {
    const hub = new EventHub()
    const tapped: string[] = []
    const untap = hub.tap((threadId, events) => tapped.push(`${threadId}:${events.length}`))
    for (let i = 0; i <= 1000; i++) hub.lose('t', `r${i}`, 'INTERNAL')
    expect(hub.lostCode('t', 'r0')).toBeUndefined()
    expect(hub.lostCode('t', 'r1000')).toBe('INTERNAL')
    hub.publish('a', [{ seq: 1, runId: 'x', type: 'RUN_STARTED', json: '{}' }])
    untap()
    hub.publish('a', [{ seq: 2, runId: 'x', type: 'RUN_STARTED', json: '{}' }])
    expect(tapped).toEqual(['a:1'])
  })
})

describe('EventHub wake-ups', () => {
  it('ignores the echo of a head this process published to the thread readers, and wakes them for anything newer', async () => {
    const tick = () => new Promise((resolve) => setImmediate(resolve))
    const hub = new EventHub()
    const seen: number[] = []
    const unsubscribe = hub.subscribe('t', (events) => seen.push(events.length))
    hub.publish('t', [
      { seq: 1, runId: 'r', type: 'RUN_STARTED', json: '{}' },
      { seq: 2, runId: 'r', type: 'TEXT_MESSAGE_START', json: '{}' },
    ])
    hub.wake('t', 2)
    hub.wake('t', 1)
    expect(seen).toEqual([2])
    // Appended by another process: read the log (a tick later, after this process's own answers were handled).
    hub.wake('t', 3)
    expect(seen).toEqual([2])
    await tick()
    expect(seen).toEqual([2, 0])
    // The echo that arrives before the local append's answer: the publish in the same tick wins.
    hub.wake('t', 4)
    hub.publish('t', [{ seq: 4, runId: 'r', type: 'TEXT_MESSAGE_END', json: '{}' }])
    await tick()
    expect(seen).toEqual([2, 0, 1])
    // A wake-up without a head (the log poll, a lost run) always reaches the readers.
    hub.wake('t')
    expect(seen).toEqual([2, 0, 1, 0])
    // Without readers the head is forgotten, so a later reader is woken by the same head.
    unsubscribe()
    hub.subscribe('t', (events) => seen.push(events.length))
    hub.wake('t', 2)
    await tick()
    expect(seen).toEqual([2, 0, 1, 0, 0])
  })
})
