import type { AgUiEvent } from '@interlude/protocol'
import type { NewEvent, Store } from '../store/store.ts'
import type { EventHub } from './event-hub.ts'
import { toNewEvent } from './events.ts'

/** Buffers events and appends them in order; a pending buffer is flushed on the next macrotask. */
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

  /** Appends everything buffered so far, in order. */
  flush(): Promise<void> {
    this.#chain = this.#chain.then(async () => {
      if (this.#buffer.length === 0) return
      const batch = this.#buffer
      this.#buffer = []
      const stored = await this.#store.appendEvents(this.#threadId, this.#runId, batch).catch((error: unknown) => {
        this.#failure ??= error
        throw error
      })
      this.#hub.publish(this.#threadId, stored)
    })
    return this.#chain
  }
}
