import type { AgUiEvent } from '@interlude/protocol'

/**
 * Events produced while a promise runs (a subagent tool's `execute`), handed to the run's generator as they come:
 * `drain(work)` yields every pushed event, in order, until `work` settles, then returns its value (or throws).
 */
export class EventChannel {
  #items: AgUiEvent[] = []
  #wake: (() => void) | undefined

  push(event: AgUiEvent): void {
    this.#items.push(event)
    this.#signal()
  }

  async *drain<T>(work: Promise<T>): AsyncGenerator<AgUiEvent, T, undefined> {
    let settled = false
    void work.then(
      () => {
        settled = true
        this.#signal()
      },
      () => {
        settled = true
        this.#signal()
      },
    )
    for (;;) {
      while (this.#items.length > 0) yield this.#items.shift()!
      if (settled) break
      await new Promise<void>((resolve) => {
        this.#wake = resolve
        if (this.#items.length > 0 || settled) this.#signal()
      })
    }
    // Events pushed in the same tick as the settlement.
    while (this.#items.length > 0) yield this.#items.shift()!
    return work
  }

  #signal(): void {
    const wake = this.#wake
    this.#wake = undefined
    wake?.()
  }
}
