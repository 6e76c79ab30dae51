/** CPU time all runs of the process together may take before they let the event loop poll I/O. */
const SLICE_MS = 4

/** One turn of the event loop (pending I/O runs first). */
export const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve))

/**
 * One CPU budget shared by every run of the process. Per-run slices are not enough: the
 * setImmediate callbacks of 100 runs all fire in the same check phase, so 100 × 4 ms of run work
 * would pass before the loop polls again — and an admission waiting on a database reply waits that
 * long. With one shared budget at most ~SLICE_MS of run work happens between two polls: waiters
 * share one gate that opens on the next loop iteration (an immediate queued during the check phase
 * runs only after the next poll phase).
 */
class SharedSlice {
  #start = performance.now()
  #gate: Promise<void> | undefined

  async yieldIfSpent(): Promise<void> {
    while (performance.now() - this.#start > SLICE_MS) {
      this.#gate ??= new Promise<void>((resolve) =>
        setImmediate(() => {
          this.#gate = undefined
          this.#start = performance.now()
          resolve()
        }),
      )
      await this.#gate
    }
  }
}

/** The one budget of this process. */
export const sharedSlice = new SharedSlice()
