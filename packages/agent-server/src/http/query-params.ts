import { InterludeError } from '@interlude/protocol'

/** `limit` of a keyset page (docs/protocol.md): an integer from 1 to 100, default 20. */
export function parseLimit(value: string | undefined): number {
  const limit = Number(value ?? '20')
  if (value === '' || !Number.isInteger(limit) || limit < 1 || limit > 100)
    throw new InterludeError('INVALID_INPUT', 'limit must be an integer from 1 to 100.')
  return limit
}

/** A non-negative integer event id from `Last-Event-ID` or `?after=`. */
export function parseAfter(value: string | undefined): number {
  if (value === undefined || value === '') return 0
  if (!/^\d{1,15}$/.test(value))
    throw new InterludeError('INVALID_INPUT', 'Last-Event-ID / after must be a non-negative integer.')
  return Number(value)
}

/** `?follow=` of the events route: `1`/`true` keeps the stream open across runs; absent, `0` or `false` does not. */
export function parseFollow(value: string | undefined): boolean {
  if (value === undefined || value === '0' || value === 'false') return false
  if (value === '1' || value === 'true') return true
  throw new InterludeError('INVALID_INPUT', 'follow must be 1, true, 0 or false.')
}
