import { SERVER_DEFAULTS } from '../../config/defaults.ts'
import type { AdmissionTurnsOptions } from '../../config/server-options.ts'

/**
 * Admissions take turns with the rest of the process (docs/architecture.md, "Admission under a burst").
 *
 * A burst of requests arrives in one read of the event loop: Node parses every one of them and runs each handler up
 * to its first wait before it reads any other socket — the database's answers included. Without turns, the first
 * claim of a burst of 100 was committed by PostgreSQL in 2 ms and its answer read 20 ms later, after the whole
 * burst had been checked; the claims that queued meanwhile went out only then, and the admitted runs took the CPU
 * before the last answers were read.
 *
 * With turns, the requests of a burst wait (right after the request log) and are let through in slices: each
 * event-loop iteration lets admissions run for about `sliceMs` of CPU, one after the other, then the loop reads its
 * sockets again. A claim's answer is so seen within a slice or two, the database commits one group of claims while
 * the next slice is checked, and every request's own admission stays short; the wait for a turn is reported beside
 * it (`Server-Timing: turn;dur=…`). A lone request is never delayed: a request that finds no slice under way takes
 * its turn at once.
 *
 * Runs admitted meanwhile start once no admission is in progress, or after `maxRunDelayMs`, whichever comes first:
 * a burst is admitted before its runs take the CPU, and a steady stream of requests never starves them.
 */

export class AdmissionTurns {
  readonly #sliceMs: number
  readonly #maxRunDelayMs: number
  #waiting: (() => void)[] = []
  /** Admissions between their checks' start and their answer (`admit`): their claim may be in flight. */
  #admitting = 0
  /** A slice is under way or scheduled: new requests queue. */
  #busy = false
  #runs: (() => void)[] = []
  #runTimer: ReturnType<typeof setTimeout> | undefined
  /** Set by `release()`: the process is closing, nothing is held back any more. */
  #released = false

  constructor(options: AdmissionTurnsOptions = {}) {
    const defaults = SERVER_DEFAULTS.admissionTurns
    const { sliceMs = defaults.sliceMs, maxRunDelayMs = defaults.maxRunDelayMs } = options
    // Refused where configured: a slice of 0 or NaN would let one admission per iteration through (or none).
    if (!(Number.isFinite(sliceMs) && sliceMs > 0))
      throw new RangeError('admissionTurns.sliceMs must be a positive number.')
    // Capped: a held run delays its client's first event, and a longer hold is a misconfiguration, not a tuning.
    if (!(Number.isFinite(maxRunDelayMs) && maxRunDelayMs >= 0 && maxRunDelayMs <= MAX_RUN_DELAY_CAP_MS))
      throw new RangeError(`admissionTurns.maxRunDelayMs must be a number from 0 to ${MAX_RUN_DELAY_CAP_MS}.`)
    this.#sliceMs = sliceMs
    this.#maxRunDelayMs = maxRunDelayMs
  }

  /** Requests waiting for a turn. */
  get waiting(): number {
    return this.#waiting.length
  }

  /** Admissions deciding now (`admit`), their claim possibly in flight. */
  get admitting(): number {
    return this.#admitting
  }

  /** Whether runs are held back: a request waits for its turn, or an admission is deciding (never after `release`). */
  get holding(): boolean {
    return !this.#released && (this.#waiting.length > 0 || this.#admitting > 0)
  }

  /**
   * The process is closing (`close()`, `shutdown()`): the runs held back start now and no run is held again, so a
   * shutdown never waits for `maxRunDelayMs`. Requests still waiting for a turn keep their order.
   */
  release(): void {
    this.#released = true
    this.#startRuns()
  }

  /**
   * Resolves when this request may do its admission work: `undefined` (at once, no await needed) when no slice is
   * under way, otherwise in a later event-loop iteration, first come first served. Nothing to release afterwards.
   */
  take(): Promise<void> | undefined {
    if (!this.#busy) {
      // This request runs now; requests arriving in the same read queue behind it.
      this.#busy = true
      this.#scheduleSlice()
      return undefined
    }
    return new Promise<void>((resolve) => this.#waiting.push(resolve))
  }

  /**
   * Runs `decide` (the admission's checks and claim, after authentication and the body) as an admission in progress:
   * runs admitted meanwhile wait for it. What comes before (a body still arriving, a refusal) holds nothing.
   */
  async admit<T>(decide: () => Promise<T>): Promise<T> {
    this.#admitting += 1
    try {
      return await decide()
    } finally {
      this.#admitting -= 1
      this.#maybeStartRuns()
    }
  }

  /** Resolves once runs are no longer held back (at most `maxRunDelayMs` later): where an admitted run starts. */
  admissionsFirst(): Promise<void> {
    return new Promise<void>((resolve) => {
      if (!this.holding) return void setImmediate(resolve)
      this.#runs.push(resolve)
      // Unref'd: a held run alone does not keep the process alive.
      this.#runTimer ??= setTimeout(this.#startRuns, this.#maxRunDelayMs)
      this.#runTimer.unref?.()
    })
  }

  /**
   * The next slice: one immediate per waiting request (at most `MAX_PER_SLICE`), run in the next check phase one
   * after the other. Node drains the microtasks between two immediates, so each admission has run up to its first
   * real wait (a database round trip) before the next immediate measures the slice.
   */
  #scheduleSlice(): void {
    const count = Math.max(1, Math.min(this.#waiting.length, MAX_PER_SLICE))
    const slice = { startedAt: 0, closed: false }
    for (let i = 0; i < count; i++) setImmediate(this.#step, slice, i === 0, i === count - 1)
  }

  readonly #step = (slice: { startedAt: number; closed: boolean }, first: boolean, last: boolean): void => {
    if (first) slice.startedAt = performance.now()
    else if (!slice.closed && performance.now() - slice.startedAt >= this.#sliceMs) slice.closed = true
    if (!slice.closed) this.#waiting.shift()?.()
    if (!last) return
    // The slice is over: the next one after the loop has read its sockets, or none until a request comes.
    if (this.#waiting.length > 0) this.#scheduleSlice()
    else {
      this.#busy = false
      this.#maybeStartRuns()
    }
  }

  #maybeStartRuns(): void {
    if (!this.holding && this.#runs.length > 0) setImmediate(this.#startRuns)
  }

  readonly #startRuns = (): void => {
    if (this.#runTimer !== undefined) clearTimeout(this.#runTimer)
    this.#runTimer = undefined
    const runs = this.#runs
    this.#runs = []
    for (const start of runs) start()
  }
}

/** The largest `maxRunDelayMs` accepted. */
export const MAX_RUN_DELAY_CAP_MS = 60_000
/** Admissions one slice can let through (a bound on the immediates it schedules). */
const MAX_PER_SLICE = 64
