import { describe, expect, it } from 'vitest'
import { abortableSleep, retryAfterMs, retryDelayMs } from './openai-retry.ts'

describe('back-off', () => {
  it('reads retry-after-ms, retry-after seconds and retry-after dates', () => {
    expect(retryAfterMs(new Headers({ 'retry-after-ms': '250' }))).toBe(250)
    expect(retryAfterMs(new Headers({ 'retry-after': '25' }))).toBe(25_000)
    const now = Date.parse('2026-11-30T12:00:00Z')
    expect(retryAfterMs(new Headers({ 'retry-after': 'Mon, 30 Nov 2026 12:00:07 GMT' }), now)).toBe(7000)
    expect(retryAfterMs(new Headers({ 'retry-after': 'soon' }))).toBeUndefined()
    expect(retryAfterMs(new Headers())).toBeUndefined()
    expect(retryAfterMs(undefined)).toBeUndefined()
  })

  it('honours Retry-After up to the cap; without it, exponential with jitter, also capped', () => {
    expect(retryDelayMs(new Headers({ 'retry-after': '25' }), 0, 10_000)).toBe(10_000)
    expect(retryDelayMs(new Headers({ 'retry-after': '2' }), 0, 10_000)).toBe(2000)
    expect(retryDelayMs(undefined, 0, 10_000, () => 0)).toBe(500)
    expect(retryDelayMs(undefined, 2, 10_000, () => 0)).toBe(2000)
    expect(retryDelayMs(undefined, 2, 10_000, () => 1)).toBe(1500)
    expect(retryDelayMs(undefined, 10, 10_000, () => 0)).toBe(8000)
    expect(retryDelayMs(undefined, 10, 1000, () => 0)).toBe(1000)
  })

  it('a wait rejects when its signal aborts', async () => {
    const controller = new AbortController()
    const waiting = abortableSleep(60_000, controller.signal)
    controller.abort()
    await expect(waiting).rejects.toMatchObject({ name: 'AbortError' })
  })
})
