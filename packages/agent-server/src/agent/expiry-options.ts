import type { ExpiryPolicy } from '@interlude/protocol'

/**
 * The deadline options of tools and of the server (docs/approvals.md#deadlines), checked once where they are given —
 * `createAgentServer`, `askUser`, the CLI — so a typo fails at construction instead of deciding batches wrongly later.
 */

export const EXPIRY_POLICIES: readonly ExpiryPolicy[] = ['deny', 'cancel', 'keep']

/** Longest accepted `timeout`: a deadline must stay a valid date (`toISOString`) for a long time to come. */
export const MAX_TIMEOUT_SECONDS = 100 * 365 * 24 * 3600

export function isExpiryPolicy(value: unknown): value is ExpiryPolicy {
  return typeof value === 'string' && (EXPIRY_POLICIES as readonly string[]).includes(value)
}

/** Why `value` is not a valid `onExpiry` (absent is valid). */
export function expiryOptionProblem(value: unknown, name = 'onExpiry'): string | undefined {
  if (value === undefined || isExpiryPolicy(value)) return undefined
  return `${name} must be one of ${EXPIRY_POLICIES.join(', ')} (got ${JSON.stringify(value) ?? String(value)}).`
}

/** Why `value` is not a valid `timeout` in seconds (absent is valid). */
export function timeoutProblem(value: unknown, name = 'timeout'): string | undefined {
  if (value === undefined) return undefined
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0 || value > MAX_TIMEOUT_SECONDS)
    return `${name} must be a positive number of seconds, at most ${MAX_TIMEOUT_SECONDS} (got ${String(value)}).`
  return undefined
}

/** Seconds → whole milliseconds, at least 1 (stores keep integer epoch milliseconds). */
export function secondsToMs(seconds: number): number {
  return Math.max(1, Math.round(seconds * 1000))
}
