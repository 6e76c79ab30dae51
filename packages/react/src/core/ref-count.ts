/**
 * Reference counting for UI bindings: when the last holder releases, `onIdle` runs on the next
 * macrotask unless the count went up again first (React StrictMode unmounts and remounts effects
 * synchronously; that must not kill the runtime).
 */
export class RefCount {
  #holders = 0
  #timer: ReturnType<typeof setTimeout> | undefined
  readonly #onIdle: () => void

  constructor(onIdle: () => void) {
    this.#onIdle = onIdle
  }

  /** Adds a holder; returns its release function (idempotent). */
  readonly retain = (): (() => void) => {
    this.#holders += 1
    if (this.#timer !== undefined) {
      clearTimeout(this.#timer)
      this.#timer = undefined
    }
    let released = false
    return () => {
      if (released) return
      released = true
      this.#holders -= 1
      if (this.#holders === 0) {
        this.#timer = setTimeout(() => {
          this.#timer = undefined
          if (this.#holders === 0) this.#onIdle()
        }, 0)
      }
    }
  }
}
