/** Bounded exponential backoff between reconnects and retries. */
export interface BackoffOptions {
  /** Delay before the first retry, in ms. @default 250 */
  readonly initialMs?: number
  /** Upper bound of every delay, in ms. @default 5000 */
  readonly maxMs?: number
}

export const DEFAULT_BACKOFF = { initialMs: 250, maxMs: 5000 } as const

/**
 * The delay before retry number `attempt` (0-based): `initialMs · 2^attempt`, capped at `maxMs`, then
 * "equal jitter" (half fixed, half random) so that many followers dropped by one restart do not all
 * reconnect in the same millisecond. Always within `[cap / 2, cap]`.
 */
export function backoffDelay(attempt: number, options: BackoffOptions = {}, random: () => number = Math.random) {
  const initial = options.initialMs ?? DEFAULT_BACKOFF.initialMs
  const max = options.maxMs ?? DEFAULT_BACKOFF.maxMs
  const cap = Math.min(max, initial * 2 ** Math.min(attempt, 30))
  return cap / 2 + random() * (cap / 2)
}

/** Waits `ms`; resolves `false` at once (and early) when `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(false)
  return new Promise((resolve) => {
    const onAbort = () => {
      clearTimeout(timer)
      resolve(false)
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve(true)
    }, ms)
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}
