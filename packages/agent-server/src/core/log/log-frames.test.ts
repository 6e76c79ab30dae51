import { getEventListeners } from 'node:events'
import { describe, expect, it } from 'vitest'
import type { Store } from '../../store/store.ts'
import { EventHub } from './event-hub.ts'
import { logFrames } from './log-frames.ts'

/** A store that fails the test if the stream reads it: a parked stream whose client left reads nothing. */
const unreadStore = new Proxy({} as Store, {
  get(_target, key) {
    throw new Error(`the stream used store.${String(key)}`)
  },
})

const abortListeners = (signal: AbortSignal) => getEventListeners(signal, 'abort').length

describe('logFrames parked behind startAfter (core/runs/admission-turns.ts)', () => {
  it('an abort while parked ends the stream without subscribing or reading', async () => {
    const hub = new EventHub()
    let subscribed = 0
    const subscribe = hub.subscribe.bind(hub)
    hub.subscribe = (...args) => {
      subscribed += 1
      return subscribe(...args)
    }
    const controller = new AbortController()
    // Held forever (an admission that never answers).
    const frames = logFrames('t1', {
      store: unreadStore,
      hub,
      runId: 'r1',
      untilRunEnds: 'r1',
      signal: controller.signal,
      startAfter: () => new Promise<void>(() => undefined),
    })
    const next = frames.next()
    await new Promise((resolve) => setImmediate(resolve))
    expect(abortListeners(controller.signal)).toBe(1)
    controller.abort()
    expect(await next).toEqual({ done: true, value: undefined })
    expect(subscribed).toBe(0)
    expect(abortListeners(controller.signal)).toBe(0)
  })

  it('a stream that starts drops its parking listener: only its own abort listener stays while it reads', async () => {
    const hub = new EventHub()
    const controller = new AbortController()
    let reads = 0
    // The log holds nothing yet and the run is running: the stream, once started, waits for its events.
    const store = {
      readEvents: async () => {
        reads += 1
        return []
      },
      getRun: async () => ({ status: 'running' }),
    } as unknown as Store
    const frames = logFrames('t1', {
      store,
      hub,
      runId: 'r1',
      untilRunEnds: 'r1',
      signal: controller.signal,
      startAfter: async () => {},
    })
    const next = frames.next()
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve))
    expect(reads).toBe(1)
    expect(abortListeners(controller.signal)).toBe(1)
    controller.abort()
    expect(await next).toEqual({ done: true, value: undefined })
    expect(abortListeners(controller.signal)).toBe(0)
  })
})
