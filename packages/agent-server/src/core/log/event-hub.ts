import type { RunErrorCode } from '@interlude/protocol'
import type { StoredEvent } from '../../store/store.ts'

/** Called with freshly appended events, or with `[]` as a bare wake-up ("read the log"). */
export type EventListener = (events: readonly StoredEvent[]) => void

/** Sees every event published in this process, for every thread (metrics, logs). */
export type EventTap = (threadId: string, events: readonly StoredEvent[]) => void

/** Runs remembered as lost (for readers that subscribe just after the loss); the oldest are forgotten first. */
const MAX_LOST = 1000

/**
 * In-process fan-out of events that were just appended to the log, plus wake-ups for events
 * appended by other processes (LISTEN/NOTIFY or the log poll of `LogWatcher`). Only a wake-up
 * mechanism: readers always start from the store, so a missed notification costs latency, never data.
 */
export class EventHub {
  readonly #listeners = new Map<string, Set<EventListener>>()
  readonly #taps = new Set<EventTap>()
  /** `threadId NUL runId` → the code its open streams end with (see `lose`). */
  readonly #lost = new Map<string, RunErrorCode>()
  /**
   * The highest seq published here per thread that has readers: the NOTIFY of an append made by this process comes
   * back to it, and must not make every reader of the thread read the log again for events it already got.
   */
  readonly #published = new Map<string, number>()

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
      if (current.size === 0) {
        this.#listeners.delete(threadId)
        this.#published.delete(threadId)
      }
    }
  }

  publish(threadId: string, events: readonly StoredEvent[]): void {
    if (events.length === 0) return
    // Any committed event of a lost run (its durable end, or a continuation by recovery) supersedes the notice.
    if (this.#lost.size > 0) for (const e of events) this.#lost.delete(`${threadId}\u0000${e.runId}`)
    for (const tap of this.#taps) tap(threadId, events)
    if (this.#listeners.has(threadId)) {
      const head = events[events.length - 1]!.seq
      if (head > (this.#published.get(threadId) ?? 0)) this.#published.set(threadId, head)
    }
    this.#emit(threadId, events)
  }

  /** Adds a process-wide observer of published events; returns its removal. */
  tap(listener: EventTap): () => void {
    this.#taps.add(listener)
    return () => this.#taps.delete(listener)
  }

  /**
   * A run of this process ended without a durable terminal event (its store failed: docs/decisions.md#operating-it, typed store
   * failures). Its open streams end now with `RUN_ERROR { code }` (a frame outside the log); the run itself is
   * closed or continued by recovery once its lease lapses, and any event it then commits replaces this notice.
   */
  lose(threadId: string, runId: string, code: RunErrorCode): void {
    const id = `${threadId}\u0000${runId}`
    this.#lost.delete(id)
    this.#lost.set(id, code)
    if (this.#lost.size > MAX_LOST) this.#lost.delete(this.#lost.keys().next().value!)
    this.wake(threadId)
  }

  /** The code a lost run's streams end with, while no durable end of it was published here. */
  lostCode(threadId: string, runId: string): RunErrorCode | undefined {
    return this.#lost.get(`${threadId}\u0000${runId}`)
  }

  /**
   * Tells the thread's readers to read the log (something was appended elsewhere). With `seq` (the log head a NOTIFY
   * reports), nothing happens when this process published up to it already: its readers have those events (a reader
   * subscribed after the publish reads the log itself), so the echo of a local append costs no read per reader.
   */
  wake(threadId: string, seq?: number): void {
    if (seq === undefined) return this.#emit(threadId, [])
    if (!this.#listeners.has(threadId) || seq <= (this.#published.get(threadId) ?? 0)) return
    // The NOTIFY of a local append often arrives just before the append's own answer: judge it once that answer was
    // handled (same poll phase), so the echo is recognised; a remote append's wake-up is one tick later.
    setImmediate(() => {
      if (seq > (this.#published.get(threadId) ?? 0)) this.#emit(threadId, [])
    })
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
