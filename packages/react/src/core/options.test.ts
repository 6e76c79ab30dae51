import { afterEach, describe, expect, it, vi } from 'vitest'
import { DEFAULTS, resolveOptions } from './options.ts'
import type { ChatRuntimeOptions } from './types.ts'

afterEach(() => {
  vi.restoreAllMocks()
})

describe('resolveOptions', () => {
  it('applies the documented defaults', () => {
    const o = resolveOptions({})
    expect(o).toMatchObject({
      api: '/api/agent',
      credentials: 'same-origin',
      tools: [],
      context: [],
      forwardedProps: {},
      retry: { attempts: 2 },
      reconnect: { attempts: 3, idleTimeoutMs: 45_000 },
      throttleMs: 16,
      maxToolRoundtrips: 8,
    })
    expect(o.retry.delayMs).toBe(DEFAULTS.retry.delayMs)
    expect(o.reconnect.delayMs).toBe(DEFAULTS.retry.delayMs)
    expect(o.generateId).toBe(DEFAULTS.generateId)
  })

  it('backs off 250 ms, doubling, capped at 4 s', () => {
    expect([1, 2, 3, 4, 5, 6].map(DEFAULTS.retry.delayMs)).toEqual([250, 500, 1000, 2000, 4000, 4000])
  })

  it('reads the default clock at call time', () => {
    const o = resolveOptions({})
    vi.spyOn(Date, 'now').mockReturnValue(42)
    expect(o.now()).toBe(42)
  })

  it('treats undefined and null like an absent option (as `??` does)', () => {
    const given = { api: undefined, throttleMs: null, retry: { attempts: undefined } }
    const o = resolveOptions(given as unknown as ChatRuntimeOptions)
    expect(o).toMatchObject({ api: '/api/agent', throttleMs: 16, retry: { attempts: 2 } })
  })

  it('keeps a null initialState (a value, not a setting)', () => {
    expect(resolveOptions<null>({ initialState: null }).initialState).toBeNull()
  })

  it('keeps what is given, including 0 and partial retry/reconnect settings', () => {
    const delayMs = () => 0
    const now = () => 1
    const o = resolveOptions({
      api: '/x',
      retry: { attempts: 0 },
      reconnect: { delayMs, idleTimeoutMs: 0 },
      throttleMs: 0,
      maxToolRoundtrips: 1,
      now,
      initialState: { a: 1 },
    })
    expect(o).toMatchObject({ api: '/x', throttleMs: 0, maxToolRoundtrips: 1, initialState: { a: 1 } })
    expect(o.retry).toEqual({ attempts: 0, delayMs: DEFAULTS.retry.delayMs })
    expect(o.reconnect).toEqual({ attempts: 3, delayMs, idleTimeoutMs: 0 })
    expect(o.now).toBe(now)
  })
})
