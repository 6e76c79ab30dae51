/** The time bounds of one model call (docs/protocol.md#model-errors). Every bound is in ms; 0 turns it off. */
export interface ModelTimeouts {
  /** From sending the request (each attempt) to the response headers. */
  readonly headersMs: number
  /** Between two streamed data chunks. SSE comments are not activity: a proxy pinging a stalled stream times out. */
  readonly idleMs: number
  /** The whole call: every attempt, every back-off wait and the whole stream. */
  readonly totalMs: number
}

export type TimeoutPhase = 'headers' | 'idle' | 'total'

/**
 * Watches one model call. openai@6's `timeout` covers only the time to response headers, and a stalled
 * body is left to undici's 300 s body timeout (or forever, if the upstream sends comments); this guard
 * aborts the call's signal instead — the request, the body read or a back-off wait — and remembers why.
 * It is fed by the SDK's chunk iterator, which yields only parsed `data:` frames, so comments never
 * reset the idle timer.
 */
export class CallGuard {
  readonly #controller = new AbortController()
  readonly #timeouts: ModelTimeouts
  readonly #parent: AbortSignal
  readonly #onParentAbort = () => this.#controller.abort(this.#parent.reason)
  #phaseTimer: ReturnType<typeof setTimeout> | undefined
  #totalTimer: ReturnType<typeof setTimeout> | undefined
  #timedOut: TimeoutPhase | undefined

  constructor(parent: AbortSignal, timeouts: ModelTimeouts) {
    this.#parent = parent
    this.#timeouts = timeouts
    if (parent.aborted) this.#controller.abort(parent.reason)
    else parent.addEventListener('abort', this.#onParentAbort, { once: true })
    if (timeouts.totalMs > 0) this.#totalTimer = setTimeout(() => this.#expire('total'), timeouts.totalMs)
  }

  /** Aborted by the caller (cancel, shutdown) or by a bound. */
  get signal(): AbortSignal {
    return this.#controller.signal
  }

  /** Which bound ran out, if one did. */
  get timedOut(): TimeoutPhase | undefined {
    return this.#timedOut
  }

  /** A request is about to be sent: headers must arrive within `headersMs`. */
  awaitingHeaders(): void {
    this.#arm('headers', this.#timeouts.headersMs)
  }

  /** Headers arrived, or a data chunk did: the next chunk must come within `idleMs`. */
  activity(): void {
    this.#arm('idle', this.#timeouts.idleMs)
  }

  /** No phase bound while waiting between attempts (the total bound still applies). */
  pause(): void {
    clearTimeout(this.#phaseTimer)
  }

  dispose(): void {
    clearTimeout(this.#phaseTimer)
    clearTimeout(this.#totalTimer)
    this.#parent.removeEventListener('abort', this.#onParentAbort)
  }

  #arm(phase: TimeoutPhase, ms: number): void {
    clearTimeout(this.#phaseTimer)
    if (ms > 0) this.#phaseTimer = setTimeout(() => this.#expire(phase), ms)
  }

  #expire(phase: TimeoutPhase): void {
    if (this.#controller.signal.aborted) return
    this.#timedOut = phase
    this.dispose()
    this.#controller.abort(new Error(`model call ${phase} timeout`))
  }
}
