import { describe, expect, it } from 'vitest'
import { retryDelayMs } from './retry-backoff.ts'

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
})
