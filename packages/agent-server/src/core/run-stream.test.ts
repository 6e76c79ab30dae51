import { describe, expect, it } from 'vitest'
import type { Store } from '../store/store.ts'
import { EventHub } from './event-hub.ts'
import { logFrames } from './run-stream.ts'

/** A store that fails the test if the stream reads it: a parked stream whose client left reads nothing. */
const unreadStore = new Proxy({} as Store, {
  get(_target, key) {
    throw new Error(`the stream used store.${String(key)}`)
  },
})

/** An abort signal that counts the listeners added to it and removed from it. */
function countedSignal(): { controller: AbortController; added: () => number; removed: () => number } {
  const controller = new AbortController()
  const signal = controller.signal
  let added = 0
  let removed = 0
  const add = signal.addEventListener.bind(signal)
  const remove = signal.removeEventListener.bind(signal)
  signal.addEventListener = ((...args: Parameters<AbortSignal['addEventListener']>) => {
    added += 1
    add(...args)
  }) as AbortSignal['addEventListener']
  signal.removeEventListener = ((...args: Parameters<AbortSignal['removeEventListener']>) => {
    removed += 1
    remove(...args)
  }) as AbortSignal['removeEventListener']
  return { controller, added: () => added, removed: () => removed }
}

describe('logFrames parked behind startAfter (core/admission-turns.ts)', () => {
  it('an abort while parked ends the stream without subscribing or reading, and leaves no listener behind', async () => {
    const hub = new EventHub()
    let subscribed = 0
    const subscribe = hub.subscribe.bind(hub)
    hub.subscribe = (...args) => {
      subscribed += 1
      return subscribe(...args)
    }
    const { controller, added, removed } = countedSignal()
    const signal = controller.signal
    // Held forever (an admission that never answers).
    const frames = logFrames('t1', {
      store: unreadStore,
      hub,
      runId: 'r1',
      untilRunEnds: 'r1',
      signal,
      startAfter: () => new Promise<void>(() => undefined),
    })
    const next = frames.next()
    await new Promise((resolve) => setImmediate(resolve))
    expect(added() - removed()).toBe(1)
    controller.abort()
    expect(await next).toEqual({ done: true, value: undefined })
    expect(subscribed).toBe(0)
    expect(added() - removed()).toBe(0)
  })

  it('a stream that starts removes its parking listener from a long-lived signal', async () => {
    const hub = new EventHub()
    const { controller, added, removed } = countedSignal()
    const signal = controller.signal
    let reads = 0
    // The log holds nothing yet and the run is running: the stream, once started, waits for its events.
    const store = {
      readEvents: async () => {
        reads += 1
        return []
      },
      getRun: async () => ({ status: 'running' }),
    } as unknown as Store
    const frames = logFrames('t1', { store, hub, runId: 'r1', untilRunEnds: 'r1', signal, startAfter: async () => {} })
    const next = frames.next()
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve))
    // The parking listener is gone once started (the stream's own abort listener stays while it reads).
    expect(removed()).toBe(1)
    expect(added() - removed()).toBe(1)
    expect(reads).toBe(1)
    controller.abort()
    expect(await next).toEqual({ done: true, value: undefined })
    expect(added() - removed()).toBe(0)
  })
})
