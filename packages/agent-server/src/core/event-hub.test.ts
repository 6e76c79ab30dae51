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
