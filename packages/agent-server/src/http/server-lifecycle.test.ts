import { describe, expect, it } from 'vitest'
import { STOP_STEPS } from './server-lifecycle.ts'

describe('the stop order', () => {
  it('one list for close() and shutdown(): requests, sweeps, runs, streams, wake-ups, deliveries, the store', () => {
    expect(STOP_STEPS.map((step) => step.name)).toEqual([
      'refuse new requests',
      'recovery sweep',
      'expiry sweep',
      'policy sweep',
      'admission turns',
      'runs',
      'run streams',
      'live tails',
      'log poll',
      'change feed',
      'webhook sender',
      'store',
    ])
  })
})
