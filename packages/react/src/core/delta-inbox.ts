import type { AgUiEvent } from '@interlude/protocol'

/** The content events of one run waiting to be committed, with the last SSE id among them. */
export interface DeltaBatch {
  readonly gen: number
  readonly events: readonly AgUiEvent[]
  readonly lastEventId: string | undefined
}

interface OpenBatch {
  readonly gen: number
  readonly events: AgUiEvent[]
  lastEventId: string | undefined
}

/**
 * Buffers streamed content events of the live run so a burst commits as one reducer action
 * (docs/react-runtime.md#commits-and-coalescing). The first event of a burst arms a timer of
 * `throttleMs()`; when it fires, `onDue` is called and the owner takes the batch. A timer, not a
 * microtask: events from an async iterator arrive one microtask apart and would never coalesce.
 * Events of another run replace the batch (the old run is retired).
 */
export class DeltaInbox {
  #batch: OpenBatch | undefined
  #timer: ReturnType<typeof setTimeout> | undefined
  readonly #throttleMs: () => number
  readonly #onDue: () => void

  constructor(throttleMs: () => number, onDue: () => void) {
    this.#throttleMs = throttleMs
    this.#onDue = onDue
  }

  get pending(): boolean {
    return this.#batch !== undefined
  }

  push(gen: number, event: AgUiEvent, id: string | undefined): void {
    if (this.#batch && this.#batch.gen !== gen) this.#batch = undefined
    const batch = (this.#batch ??= { gen, events: [], lastEventId: undefined })
    batch.events.push(event)
    if (id !== undefined) batch.lastEventId = id
    if (this.#timer === undefined) {
      this.#timer = setTimeout(() => {
        this.#timer = undefined
        if (this.#batch) this.#onDue()
      }, this.#throttleMs())
    }
  }

  /** Removes and returns the buffered batch (if any) and disarms the timer. */
  take(): DeltaBatch | undefined {
    const batch = this.#batch
    this.drop()
    return batch
  }

  /** Forgets the buffered batch (thread change, disposal). */
  drop(): void {
    this.#batch = undefined
    if (this.#timer !== undefined) {
      clearTimeout(this.#timer)
      this.#timer = undefined
    }
  }
}
