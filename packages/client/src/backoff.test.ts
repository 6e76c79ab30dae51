import { describe, expect, it } from 'vitest'
import { backoffDelay, sleep } from './backoff.ts'

describe('backoffDelay', () => {
  it('doubles from initialMs, is capped at maxMs and stays within [cap / 2, cap]', () => {
    const options = { initialMs: 100, maxMs: 1000 }
    const caps = [100, 200, 400, 800, 1000, 1000, 1000]
    caps.forEach((cap, attempt) => {
      expect(backoffDelay(attempt, options, () => 0)).toBe(cap / 2)
      expect(backoffDelay(attempt, options, () => 0.999999)).toBeCloseTo(cap, 2)
    })
    expect(backoffDelay(10_000, options, () => 1)).toBe(1000)
  })
})

describe('sleep', () => {
  it('answers false at once for an aborted signal, and early when the signal aborts', async () => {
    expect(await sleep(1, AbortSignal.abort())).toBe(false)
    const controller = new AbortController()
    const waiting = sleep(60_000, controller.signal)
    controller.abort()
    expect(await waiting).toBe(false)
    expect(await sleep(0)).toBe(true)
  })
})
