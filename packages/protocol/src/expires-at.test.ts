import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { isExpiredAt, isRfc3339, parseExpiresAt, parseRfc3339 } from './expires-at.ts'

describe('parseRfc3339', () => {
  it.each([
    ['2026-11-30T10:00:00Z', Date.UTC(2026, 10, 30, 10)],
    ['2026-11-30t10:00:00z', Date.UTC(2026, 10, 30, 10)],
    ['2026-11-30T10:00:00.5Z', Date.UTC(2026, 10, 30, 10, 0, 0, 500)],
    ['2026-11-30T10:00:00.123456789Z', Date.UTC(2026, 10, 30, 10, 0, 0, 123)],
    ['2026-11-30T12:30:00+02:30', Date.UTC(2026, 10, 30, 10)],
    ['2026-11-30T05:00:00-05:00', Date.UTC(2026, 10, 30, 10)],
    ['2024-02-29T00:00:00Z', Date.UTC(2024, 1, 29)],
    ['2000-02-29T00:00:00Z', Date.UTC(2000, 1, 29)],
    ['0001-01-01T00:00:00Z', -62135596800000],
  ])('accepts %s', (text, expected) => {
    expect(parseRfc3339(text)).toBe(expected)
    expect(isRfc3339(text)).toBe(true)
  })

  it.each([
    '2026-11-30T10:00:00', // no offset
    '2026-11-30 10:00:00Z', // space separator
    '2026-11-30T10:00Z', // no seconds
    '2026-11-30T24:00:00Z',
    '2026-11-30T10:60:00Z',
    '2026-11-30T10:00:60Z', // leap second: not representable
    '2026-02-29T00:00:00Z', // not a leap year
    '1900-02-29T00:00:00Z',
    '2026-04-31T00:00:00Z',
    '2026-13-01T00:00:00Z',
    '2026-00-10T00:00:00Z',
    '2026-11-30T10:00:00+24:00',
    '2026-11-30T10:00:00+0200',
    '2026-11-30T10:00:00.Z',
    ' 2026-11-30T10:00:00Z',
    '2026-11-30T10:00:00Z ',
    'tomorrow',
    '',
    1764496800000,
    null,
  ])('refuses %s', (text) => {
    expect(parseRfc3339(text)).toBeUndefined()
  })

  it('round-trips every toISOString output', () => {
    fc.assert(
      fc.property(fc.integer({ min: -62135596800000, max: 253402300799999 }), (ms) => {
        expect(parseRfc3339(new Date(ms).toISOString())).toBe(ms)
      }),
    )
  })
})

describe('isExpiredAt', () => {
  const at = '2026-11-30T10:00:00Z'
  const ms = Date.UTC(2026, 10, 30, 10)
  it('is expired at and after the instant, not before', () => {
    expect(isExpiredAt(at, ms - 1)).toBe(false)
    expect(isExpiredAt(at, ms)).toBe(true)
    expect(isExpiredAt(at, ms + 1)).toBe(true)
  })
  it('never expires without expiresAt or with an unreadable one', () => {
    expect(isExpiredAt(undefined, Number.MAX_SAFE_INTEGER)).toBe(false)
    expect(isExpiredAt('soon', Number.MAX_SAFE_INTEGER)).toBe(false)
  })
  it('expires at a loose timestamp read as UTC', () => {
    const loose = Date.UTC(2026, 11, 31, 23, 59, 59)
    expect(isExpiredAt('2026-12-31T23:59:59', loose - 1)).toBe(false)
    expect(isExpiredAt('2026-12-31T23:59:59', loose)).toBe(true)
  })
})

describe('parseExpiresAt', () => {
  const instant = Date.UTC(2026, 11, 31, 23, 59, 59)
  it.each([
    ['2026-12-31T23:59:59Z', instant],
    ['2026-12-31T23:59:59', instant], // no zone: UTC, not the local zone
    ['2026-12-31 23:59:59', instant],
    ['2026-12-31T23:59:59+0000', instant],
    ['2026-12-31T23:59:59+00', instant],
    ['2026-12-31 23:59:59Z', instant],
    ['2027-01-01T01:59:59+0200', instant],
    ['2026-12-31T23:59', instant - 59_000],
    ['2026-12-31T23:59:59.250', instant + 250],
    ['2026-12-31', Date.UTC(2026, 11, 31)],
    ['Thu, 31 Dec 2026 23:59:59 GMT', instant],
  ])('reads %s', (text, expected) => {
    expect(parseExpiresAt(text)).toBe(expected)
  })
  it.each(['soon', '', '2026-13-45T99:99:99', 1798761599000, null, {}])('has no expiry for %s', (text) => {
    expect(parseExpiresAt(text)).toBeUndefined()
  })
  it('agrees with parseRfc3339 on every strict timestamp', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 253402300799999 }), (ms) => {
        expect(parseExpiresAt(new Date(ms).toISOString())).toBe(ms)
      }),
    )
  })
})
