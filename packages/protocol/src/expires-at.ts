/**
 * Strict RFC 3339 timestamps for `Interrupt.expiresAt`: a full date, a time with optional
 * fraction, and a mandatory `Z` or `±hh:mm` offset. Anything looser (no offset, a space
 * separator, `24:00`, 30 February) is refused rather than guessed at by `Date.parse`.
 */
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/

function daysInMonth(year: number, month: number): number {
  if (month === 2) {
    const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0
    return leap ? 29 : 28
  }
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31
}

/** Epoch milliseconds, or `undefined` when the text is not a strict RFC 3339 timestamp. */
export function parseRfc3339(text: unknown): number | undefined {
  if (typeof text !== 'string') return undefined
  const m = RFC3339.exec(text)
  if (!m) return undefined
  const year = Number(m[1])
  const month = Number(m[2])
  const day = Number(m[3])
  const hour = Number(m[4])
  const minute = Number(m[5])
  const second = Number(m[6])
  if (month < 1 || month > 12) return undefined
  if (day < 1 || day > daysInMonth(year, month)) return undefined
  // Leap seconds (60) cannot be represented by Date; refuse them rather than shift silently.
  if (hour > 23 || minute > 59 || second > 59) return undefined
  let offsetMinutes = 0
  if (m[8] === undefined) {
    const offH = Number(m[10])
    const offM = Number(m[11])
    if (offH > 23 || offM > 59) return undefined
    offsetMinutes = (offH * 60 + offM) * (m[9] === '-' ? -1 : 1)
  }
  const fraction = m[7] === undefined ? 0 : Math.floor(Number(`0${m[7]}`) * 1000)
  const utc = Date.UTC(year, month - 1, day, hour, minute, second, fraction)
  // Date.UTC maps years 0-99 to 1900-1999; fix that explicitly.
  const fixed = year < 100 ? new Date(utc).setUTCFullYear(year) : utc
  return fixed - offsetMinutes * 60_000
}

export function isRfc3339(text: unknown): text is string {
  return parseRfc3339(text) !== undefined
}

/**
 * ISO-like text without the strictness of RFC 3339: a space or `T` separator, optional seconds and
 * fraction, an offset as `Z`, `±hh`, `±hhmm` or `±hh:mm`, or none at all.
 */
const ISO_LIKE = /^(\d{4}-\d{2}-\d{2})(?:[Tt ](\d{2}:\d{2})(:\d{2}(?:\.\d+)?)?)?\s*(?:([Zz])|([+-]\d{2}):?(\d{2})?)?$/

/**
 * Reads an interrupt's `expiresAt` leniently (docs/decisions.md#lenient-expiresat): AG-UI leaves the
 * field unconstrained, so any date `Date.parse` reads counts. Strict RFC 3339 is read exactly; an
 * ISO-like text without a zone is read as **UTC** (never the reader's local zone, so every client and
 * the server agree on one instant); other texts go to `Date.parse` as they are. Anything unreadable
 * (not a string, `NaN`) is `undefined`: no expiry.
 */
export function parseExpiresAt(text: unknown): number | undefined {
  if (typeof text !== 'string') return undefined
  const strict = parseRfc3339(text)
  if (strict !== undefined) return strict
  const trimmed = text.trim()
  const m = ISO_LIKE.exec(trimmed)
  const normalized = m
    ? `${m[1]}T${m[2] ?? '00:00'}${m[3] ?? ':00'}${m[4] !== undefined ? 'Z' : m[5] !== undefined ? `${m[5]}:${m[6] ?? '00'}` : 'Z'}`
    : trimmed
  const at = Date.parse(normalized)
  return Number.isNaN(at) ? undefined : at
}

/**
 * True when `expiresAt` is readable and `now >= expiresAt`. Absent or unreadable means no expiry:
 * a foreign server's odd timestamp must not lose the pause (the server still refuses a late answer).
 */
export function isExpiredAt(expiresAt: string | undefined, now: number): boolean {
  const at = parseExpiresAt(expiresAt)
  return at !== undefined && now >= at
}
