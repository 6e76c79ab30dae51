import type { StoredEvent } from '../store/store.ts'

export type EventListener = (events: readonly StoredEvent[]) => void

/**
 * In-process fan-out of events that were just appended to the log. Only a wake-up mechanism:
 * readers always start from the store, so a missed notification costs latency, never data.
 */
export class EventHub {
  readonly #listeners = new Map<string, Set<EventListener>>()

  subscribe(threadId: string, listener: EventListener): () => void {
    let set = this.#listeners.get(threadId)
    if (!set) {
      set = new Set()
      this.#listeners.set(threadId, set)
    }
    set.add(listener)
    return () => {
      const current = this.#listeners.get(threadId)
      if (!current) return
      current.delete(listener)
      if (current.size === 0) this.#listeners.delete(threadId)
    }
  }

  publish(threadId: string, events: readonly StoredEvent[]): void {
    if (events.length === 0) return
    const set = this.#listeners.get(threadId)
    if (!set) return
    for (const listener of [...set]) listener(events)
  }

  get listenerCount(): number {
    let n = 0
    for (const set of this.#listeners.values()) n += set.size
    return n
  }
}
