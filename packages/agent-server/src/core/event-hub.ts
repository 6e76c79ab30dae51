import type { StoredEvent } from '../store/store.ts'

/** Called with freshly appended events, or with `[]` as a bare wake-up ("read the log"). */
export type EventListener = (events: readonly StoredEvent[]) => void

/**
 * In-process fan-out of events that were just appended to the log, plus wake-ups for events
 * appended by other processes (LISTEN/NOTIFY or the log poll of `LogWatcher`). Only a wake-up
 * mechanism: readers always start from the store, so a missed notification costs latency, never data.
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
    this.#emit(threadId, events)
  }

  /** Tells the thread's readers to read the log (something was appended elsewhere). */
  wake(threadId: string): void {
    this.#emit(threadId, [])
  }

  /** Threads that currently have readers. */
  threadIds(): string[] {
    return [...this.#listeners.keys()]
  }

  get listenerCount(): number {
    let n = 0
    for (const set of this.#listeners.values()) n += set.size
    return n
  }

  #emit(threadId: string, events: readonly StoredEvent[]): void {
    const set = this.#listeners.get(threadId)
    if (!set) return
    for (const listener of [...set]) listener(events)
  }
}
