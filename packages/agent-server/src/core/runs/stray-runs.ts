/**
 * Which runs a lease renewal found to be this executor's in the store without executing here (`RunManager`): an
 * admission whose answer was lost after its commit, or a run whose end could not be written. Such a run would hold
 * its thread for as long as the process renews leases, so one that stays stray for `afterMs` (half a lease: never
 * a run being started right now) is due to be handed to recovery. Runs this process claimed and is about to start
 * — a queued expiry continuation, a continuation being planned — are held and never due. Keys are opaque.
 */
export class StrayRuns {
  readonly #afterMs: number
  readonly #held = new Set<string>()
  /** Since when (monotonic ms) each run has been seen stray at every renewal. */
  #since = new Map<string, number>()

  constructor(afterMs: number) {
    this.#afterMs = afterMs
  }

  hold(id: string): void {
    this.#held.add(id)
  }

  unhold(id: string): void {
    this.#held.delete(id)
  }

  /**
   * The runs of one renewal that do not execute here → those stray for `afterMs` and not held (to let go now).
   * The monotonic clock by default: the server `Clock` may be moved by a test, and this is elapsed time here.
   */
  due(strays: Iterable<string>, now = performance.now()): string[] {
    const seen = new Map<string, number>()
    const due: string[] = []
    for (const id of strays) {
      if (this.#held.has(id)) continue
      const since = this.#since.get(id) ?? now
      if (now - since >= this.#afterMs) due.push(id)
      else seen.set(id, since)
    }
    this.#since = seen
    return due
  }

  /** Renewals stopped (nothing runs here): a stray is judged on renewals in a row, so the count starts again. */
  clear(): void {
    this.#since.clear()
  }
}
