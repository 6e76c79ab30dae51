/**
 * The one listener set of the client core: `add` returns the remove function, and `emit` calls
 * every listener that was registered when it started. A throwing listener must not break the
 * caller or starve the others: its error is rethrown on a microtask (reported, not swallowed).
 */
export class ListenerSet<TArgs extends unknown[] = []> {
  readonly #listeners = new Set<(...args: TArgs) => void>()

  readonly add = (listener: (...args: TArgs) => void): (() => void) => {
    this.#listeners.add(listener)
    return () => {
      this.#listeners.delete(listener)
    }
  }

  emit(...args: TArgs): void {
    for (const listener of [...this.#listeners]) {
      try {
        listener(...args)
      } catch (error) {
        queueMicrotask(() => {
          throw error
        })
      }
    }
  }

  clear(): void {
    this.#listeners.clear()
  }
}
