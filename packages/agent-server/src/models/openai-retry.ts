import { setTimeout as sleep } from 'node:timers/promises'

export interface RetryOptions {
  /** Retries after the first attempt (429, 408, 409, 5xx, connection errors). */
  readonly maxRetries: number
  /** The longest single wait, whatever `Retry-After` asks for. */
  readonly maxDelayMs: number
}

/** `retry-after-ms`, else `retry-after` (seconds or an HTTP date), in ms; `undefined` without a usable header. */
export function retryAfterMs(headers: unknown, now = Date.now()): number | undefined {
  const get = (name: string): string | null | undefined =>
    typeof (headers as Headers | undefined)?.get === 'function' ? (headers as Headers).get(name) : undefined
  const ms = Number.parseFloat(get('retry-after-ms') ?? '')
  if (Number.isFinite(ms) && ms >= 0) return ms
  const raw = get('retry-after')
  if (raw === null || raw === undefined || raw.trim() === '') return undefined
  const seconds = Number(raw)
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000
  const date = Date.parse(raw)
  return Number.isFinite(date) ? Math.max(0, date - now) : undefined
}

/**
 * How long to wait before retry number `attempt` (0-based): the server's `Retry-After` when it sends
 * one, else exponential back-off from 500 ms with up to 25 % jitter; never more than `maxDelayMs`
 * (openai@6 honours any `Retry-After` in full, which blocked cancel and shutdown for its length).
 */
export function retryDelayMs(headers: unknown, attempt: number, maxDelayMs: number, random = Math.random): number {
  const asked = retryAfterMs(headers)
  const delay = asked ?? Math.min(8000, 500 * 2 ** attempt) * (1 - 0.25 * random())
  return Math.max(0, Math.min(delay, maxDelayMs))
}

/** Waits `ms`, or rejects as soon as `signal` aborts (cancel, shutdown, the call's total bound). */
export async function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  await sleep(ms, undefined, { signal })
}
