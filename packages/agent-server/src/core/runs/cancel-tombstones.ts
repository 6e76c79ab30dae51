import type { Clock } from '../../clock.ts'

/**
 * Cancels that overtook the admission of their run (docs/protocol.md#cancel): a client that stops
 * right after sending (a resume that approves a deploy, then Stop) cancels the runId it sent, and
 * the cancel may reach the server before the run is admitted. The cancel is kept here for `ttlMs`;
 * a run admitted later under that runId, by that principal, is cancelled before it does anything.
 * Bounded: at most `max` entries, the oldest dropped first. Process-local, like the run it stops.
 */
export class CancelTombstones {
  readonly #entries = new Map<string, { readonly principal: string; readonly until: number }>()
  readonly #now: Clock
  readonly #ttlMs: number
  readonly #max: number

  constructor(now: Clock, ttlMs = 60_000, max = 10_000) {
    this.#now = now
    this.#ttlMs = ttlMs
    this.#max = max
  }

  record(threadId: string, runId: string, principal: string): void {
    const now = this.#now()
    for (const [key, entry] of this.#entries) {
      if (entry.until > now && this.#entries.size < this.#max) break
      this.#entries.delete(key)
    }
    this.#entries.set(`${threadId}\u0000${runId}`, { principal, until: now + this.#ttlMs })
  }

  /** True (once) when `principal` cancelled this run before it was admitted, within the TTL. */
  take(threadId: string, runId: string, principal: string): boolean {
    const key = `${threadId}\u0000${runId}`
    const entry = this.#entries.get(key)
    if (!entry) return false
    this.#entries.delete(key)
    return entry.principal === principal && entry.until > this.#now()
  }

  get size(): number {
    return this.#entries.size
  }
}
