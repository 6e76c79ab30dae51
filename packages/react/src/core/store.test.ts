import { afterEach, describe, expect, it, vi } from 'vitest'
import { ListenerSet } from './listener-set.ts'
import { Store } from './store.ts'

afterEach(() => {
  vi.useRealTimers()
})

const counter = () => new Store({ n: 0 }, (s) => Object.freeze({ ...s, double: s.n * 2 }))

describe('Store', () => {
  it('derives the snapshot once per commit and keeps its identity between commits', () => {
    const store = counter()
    const first = store.getSnapshot()
    expect(first).toEqual({ n: 0, double: 0 })
    expect(store.getSnapshot()).toBe(first)
    store.set({ n: 1 })
    expect(store.getSnapshot()).toEqual({ n: 1, double: 2 })
    expect(store.getSnapshot()).not.toBe(first)
  })

  it('notifies once per outermost transaction, after every write of it (nested ones included)', () => {
    const store = counter()
    const seen: number[] = []
    store.subscribe(() => seen.push(store.getSnapshot().n))
    store.transaction(() => {
      store.set({ n: 1 })
      store.transaction(() => store.set({ n: 2 }))
      expect(seen).toEqual([]) // nothing before the outermost transaction ends
      expect(store.state.n).toBe(2) // but the state is visible inside it
      expect(store.getSnapshot().n).toBe(0)
      store.set({ n: 3 })
    })
    expect(seen).toEqual([3])
  })

  it('commits a write outside a transaction at once; an identical state notifies nobody', () => {
    const store = counter()
    const listener = vi.fn()
    store.subscribe(listener)
    const before = store.getSnapshot()
    store.set(store.state)
    store.transaction(() => undefined)
    expect(listener).not.toHaveBeenCalled()
    expect(store.getSnapshot()).toBe(before)
    store.set({ n: 3 })
    expect(listener).toHaveBeenCalledTimes(1)
    expect(store.getSnapshot().n).toBe(3)
  })

  it('commits even when the transaction throws', () => {
    const store = counter()
    const listener = vi.fn()
    store.subscribe(listener)
    expect(() =>
      store.transaction(() => {
        store.set({ n: 5 })
        throw new Error('boom')
      }),
    ).toThrow('boom')
    expect(listener).toHaveBeenCalledTimes(1)
    expect(store.getSnapshot().n).toBe(5)
  })

  it('unsubscribes and clears', () => {
    const store = counter()
    const a = vi.fn()
    const b = vi.fn()
    const off = store.subscribe(a)
    store.subscribe(b)
    off()
    store.set({ n: 1 })
    expect(a).not.toHaveBeenCalled()
    expect(b).toHaveBeenCalledTimes(1)
    store.clear()
    store.set({ n: 2 })
    expect(b).toHaveBeenCalledTimes(1)
  })
})

describe('ListenerSet', () => {
  it('calls the listeners registered when emitting started, with the arguments', () => {
    const set = new ListenerSet<[string]>()
    const late = vi.fn()
    const first = vi.fn(() => set.add(late))
    set.add(first)
    set.emit('a')
    expect(first).toHaveBeenCalledWith('a')
    expect(late).not.toHaveBeenCalled()
    set.emit('b')
    expect(late).toHaveBeenCalledWith('b')
  })

  it('a throwing listener neither breaks the emitter nor starves the others; its error is rethrown later', async () => {
    const set = new ListenerSet()
    const after = vi.fn()
    set.add(() => {
      throw new Error('listener failed')
    })
    set.add(after)
    const rethrown = new Promise<unknown>((resolve) => {
      const original = globalThis.queueMicrotask
      vi.spyOn(globalThis, 'queueMicrotask').mockImplementationOnce((task) =>
        original(() => {
          try {
            task()
          } catch (error) {
            resolve(error)
          }
        }),
      )
    })
    expect(() => set.emit()).not.toThrow()
    expect(after).toHaveBeenCalledTimes(1)
    expect(await rethrown).toMatchObject({ message: 'listener failed' })
  })
})
