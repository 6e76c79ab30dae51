import { describe, expect, it } from 'vitest'
import { batchPolicy, earliestExpiry } from './expiry.ts'

const withPolicy = (onExpiry?: string) => ({ metadata: onExpiry === undefined ? {} : { onExpiry } })

describe('expiry of a batch', () => {
  it('reads the policy the server announced; keep wins in a mixed batch', () => {
    expect(batchPolicy([withPolicy('deny'), withPolicy('deny')])).toBe('deny')
    expect(batchPolicy([withPolicy('cancel')])).toBe('cancel')
    expect(batchPolicy([withPolicy('deny'), withPolicy('keep')])).toBe('keep')
    expect(batchPolicy([withPolicy('cancel'), withPolicy('deny')])).toBe('deny')
    expect(batchPolicy([withPolicy(), { metadata: undefined }])).toBeUndefined()
  })

  it('takes the earliest readable expiresAt', () => {
    expect(
      earliestExpiry([
        { expiresAt: '2026-01-01T00:00:10Z' },
        { expiresAt: 'nope' },
        { expiresAt: '2026-01-01T00:00:05Z' },
      ]),
    ).toBe(Date.parse('2026-01-01T00:00:05Z'))
    expect(earliestExpiry([{}])).toBeUndefined()
  })
})
