/**
 * The wait before attempt `attempt + 1` after attempt `attempt` failed (docs/approvals.md, "Webhooks"): exponential
 * (`baseMs`, 2×, 4× …) capped at `maxMs`, with ±25% jitter so deliveries that failed together (a receiver outage)
 * do not all come back in the same instant. The jitter band is narrow enough that waits still grow strictly until
 * the cap (the upper edge of one step, 1.25×, stays below the lower edge of the next, 1.5×).
 */
export function retryDelayMs(
  attempt: number,
  baseMs: number,
  maxMs: number,
  random: () => number = Math.random,
): number {
  const exponential = Math.min(maxMs, baseMs * 2 ** Math.max(0, attempt - 1))
  return Math.round(Math.min(maxMs, exponential * (0.75 + 0.5 * random())))
}
