import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { refCount } from './ref-count.ts'

beforeEach(() => {
  vi.useFakeTimers()
})
afterEach(() => {
  vi.useRealTimers()
})

describe('refCount', () => {
  it('runs onIdle on the next macrotask after the last release', () => {
    const idle = vi.fn()
    const refs = { retain: refCount(idle) }
    const a = refs.retain()
    const b = refs.retain()
    a()
    a() // idempotent
    vi.runAllTimers()
    expect(idle).not.toHaveBeenCalled()
    b()
    expect(idle).not.toHaveBeenCalled()
    vi.runAllTimers()
    expect(idle).toHaveBeenCalledTimes(1)
  })

  it('a retain before that macrotask keeps it alive (StrictMode unmount + remount)', () => {
    const idle = vi.fn()
    const refs = { retain: refCount(idle) }
    refs.retain()()
    const again = refs.retain()
    vi.runAllTimers()
    expect(idle).not.toHaveBeenCalled()
    again()
    vi.runAllTimers()
    expect(idle).toHaveBeenCalledTimes(1)
  })
})
