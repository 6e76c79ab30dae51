import type { AgUiEvent } from '@interlude/protocol'
import type { NewEvent, Store } from '../../store/store.ts'
import type { EventHub } from './event-hub.ts'
import { toNewEvent } from '../ev.ts'

/** How far a batch may grow past `flushEvery` while the append before it runs. */
const GROWTH = 8

/**
 * Buffers events and appends them in order; a pending buffer is flushed on the next macrotask. A full buffer
 * queues its append and the run goes on filling while the append before it is written (`relieve`), so
 * producing and writing overlap: group commit — a slow store gets larger batches (up to `flushEvery × GROWTH`),
 * and a run never has more than one statement at a time.
 */
export class LogWriter {
  readonly #store: Store
  readonly #hub: EventHub
  readonly #threadId: string
  readonly #runId: string
  readonly #flushEvery: number
  #buffer: NewEvent[] = []
  #chain: Promise<void> = Promise.resolve()
  #scheduled = false
  #failure: unknown
  /** The append `relieve` queued, until it takes the buffer; `#ahead` is what was queued before it. */
  #queued: object | undefined
  #ahead: Promise<void> = Promise.resolve()

  constructor(store: Store, hub: EventHub, threadId: string, runId: string, flushEvery: number) {
    this.#store = store
    this.#hub = hub
    this.#threadId = threadId
    this.#runId = runId
    this.#flushEvery = flushEvery
  }

  /** Throws the error of a failed append (a failed writer never recovers: the run must end). */
  throwIfFailed(): void {
    if (this.#failure !== undefined) throw this.#failure
  }

  get full(): boolean {
    return this.#buffer.length >= this.#flushEvery
  }

  push(event: AgUiEvent): void {
    this.#buffer.push(toNewEvent(event))
    if (!this.#scheduled) {
      this.#scheduled = true
      // Paced streams (a token every few ms) reach the client promptly without a flush per event.
      setImmediate(() => {
        this.#scheduled = false
        this.flush().catch(() => undefined)
      })
    }
  }

  /**
   * Called when the buffer is full: queues an append of it unless one is queued already, and waits only
   * when the buffer has grown to `flushEvery × GROWTH` while an earlier append still runs — then for that
   * append, after which the queued one takes the whole buffer. Rejects when that append failed; a later
   * failure surfaces at the next `throwIfFailed` or `flush`.
   */
  relieve(): Promise<void> | undefined {
    if (this.#queued === undefined) {
      this.#ahead = this.#chain
      const token = {}
      this.#queued = token
      this.#append(token).catch(() => undefined)
    }
    return this.#buffer.length >= this.#flushEvery * GROWTH ? this.#ahead : undefined
  }

  /** Appends everything buffered so far, in order. */
  flush(): Promise<void> {
    return this.#append(undefined)
  }

  /** `token`: the append `relieve` queued, which ends its wait once it takes the buffer. */
  #append(token: object | undefined): Promise<void> {
    this.#chain = this.#chain.then(async () => {
      if (token !== undefined && this.#queued === token) this.#queued = undefined
      if (this.#buffer.length === 0) return
      const batch = this.#buffer
      this.#buffer = []
      try {
        const stored = await this.#store.appendEvents(this.#threadId, this.#runId, batch)
        this.#hub.publish(this.#threadId, stored)
      } catch (error) {
        // Whatever failed (the append, or a reader of the hub), the run stops at its next event.
        this.#failure ??= error
        throw error
      }
    })
    return this.#chain
  }
}
