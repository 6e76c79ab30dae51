import { describe, expect, it } from 'vitest'
import { retryDelayMs } from './retry-backoff.ts'
import { WEBHOOK_RETRY_DEFAULTS } from './webhook-sender.ts'

describe('retryDelayMs', () => {
  it('doubles from the base with ±25% jitter, capped', () => {
    expect([1, 2, 3, 4].map((attempt) => retryDelayMs(attempt, 1000, 300_000, () => 0.5))).toEqual([
      1000, 2000, 4000, 8000,
    ])
    expect(retryDelayMs(1, 1000, 300_000, () => 0)).toBe(750)
    expect(retryDelayMs(1, 1000, 300_000, () => 1)).toBe(1250)
    expect(retryDelayMs(30, 1000, 300_000, () => 1)).toBe(300_000)
    expect(retryDelayMs(2000, 1000, 300_000, () => 0)).toBe(225_000)
  })

  it('grows strictly until the cap whatever the jitter', () => {
    for (let attempt = 1; attempt < 8; attempt++) {
      expect(retryDelayMs(attempt, 1000, 300_000, () => 1)).toBeLessThan(
        retryDelayMs(attempt + 1, 1000, 300_000, () => 0),
      )
    }
  })

  it("with the sender's defaults, retries outlast a 30-minute receiver outage whatever the jitter", () => {
    const { maxAttempts, retryBaseMs, retryMaxMs } = WEBHOOK_RETRY_DEFAULTS
    const span = (random: () => number) => {
      let total = 0
      for (let attempt = 1; attempt < maxAttempts; attempt++)
        total += retryDelayMs(attempt, retryBaseMs, retryMaxMs, random)
      return total
    }
    expect(span(() => 0)).toBeGreaterThan(30 * 60_000)
    expect(span(() => 1)).toBeLessThan(50 * 60_000)
  })
})
