import { describe, expect, it } from 'vitest'
import type { Interrupt } from '@ag-ui/core'
import { InterludeError } from './errors.ts'
import type { ResumeCheckResult } from './resume-checks.ts'
import { checkResume, checkResumeShape, resumeCheckError } from './resume-checks.ts'

const NOW = Date.UTC(2026, 10, 30, 10)
const later = new Date(NOW + 60_000).toISOString()
const earlier = new Date(NOW - 1).toISOString()

const pending: Interrupt[] = [
  { id: 'int_a', reason: 'tool_call', toolCallId: 'tc_a', expiresAt: later },
  { id: 'int_b', reason: 'tool_call', toolCallId: 'tc_b', expiresAt: later },
]

function failed(result: ResumeCheckResult) {
  if (result.ok) throw new Error('expected failure')
  return result
}

describe('checkResume', () => {
  it('accepts a complete batch in any order and normalises entries', () => {
    const result = checkResume(
      pending,
      [
        { interruptId: 'int_b', status: 'cancelled', extra: 'dropped' },
        { interruptId: 'int_a', status: 'resolved', payload: { approved: true }, metadata: { by: 'alice' } },
      ],
      { now: NOW },
    )
    expect(result).toEqual({
      ok: true,
      allCancelled: false,
      expired: false,
      entries: [
        { interruptId: 'int_b', status: 'cancelled' },
        { interruptId: 'int_a', status: 'resolved', payload: { approved: true }, metadata: { by: 'alice' } },
      ],
    })
  })

  it.each<[string, unknown, string, string]>([
    ['not an array', { interruptId: 'int_a' }, 'not_array', 'INVALID_INPUT'],
    [
      'an entry that is not an object',
      [null, { interruptId: 'int_b', status: 'cancelled' }],
      'invalid_entry',
      'INVALID_INPUT',
    ],
    [
      'a missing interruptId',
      [{ status: 'cancelled' }, { interruptId: 'int_b', status: 'cancelled' }],
      'invalid_entry',
      'INVALID_INPUT',
    ],
    [
      'non-object metadata',
      [
        { interruptId: 'int_a', status: 'cancelled', metadata: 'x' },
        { interruptId: 'int_b', status: 'cancelled' },
      ],
      'invalid_entry',
      'INVALID_INPUT',
    ],
    [
      'a bad status',
      [
        { interruptId: 'int_a', status: 'approved' },
        { interruptId: 'int_b', status: 'cancelled' },
      ],
      'bad_status',
      'INVALID_INPUT',
    ],
    [
      'cancelled with a payload',
      [
        { interruptId: 'int_a', status: 'cancelled', payload: { approved: false } },
        { interruptId: 'int_b', status: 'cancelled' },
      ],
      'cancelled_with_payload',
      'INVALID_INPUT',
    ],
    [
      'a non-JSON payload',
      [
        { interruptId: 'int_a', status: 'resolved', payload: { at: new Date() } },
        { interruptId: 'int_b', status: 'cancelled' },
      ],
      'non_json',
      'INVALID_INPUT',
    ],
    [
      'a non-JSON metadata',
      [
        { interruptId: 'int_a', status: 'resolved', payload: {}, metadata: { f: () => 1 } },
        { interruptId: 'int_b', status: 'cancelled' },
      ],
      'non_json',
      'INVALID_INPUT',
    ],
    [
      'a duplicate entry',
      [
        { interruptId: 'int_a', status: 'cancelled' },
        { interruptId: 'int_a', status: 'cancelled' },
        { interruptId: 'int_b', status: 'cancelled' },
      ],
      'duplicate',
      'RESUME_DUPLICATE_ENTRY',
    ],
    [
      'an unknown id',
      [
        { interruptId: 'int_a', status: 'cancelled' },
        { interruptId: 'int_b', status: 'cancelled' },
        { interruptId: 'int_z', status: 'cancelled' },
      ],
      'unknown',
      'RESUME_UNKNOWN_INTERRUPT',
    ],
    [
      'a partial batch',
      [{ interruptId: 'int_a', status: 'resolved', payload: { approved: true } }],
      'missing',
      'RESUME_INCOMPLETE',
    ],
    ['an empty batch', [], 'missing', 'RESUME_INCOMPLETE'],
  ])('refuses %s', (_name, entries, kind, code) => {
    const result = failed(checkResume(pending, entries, { now: NOW }))
    expect(result.problems[0]!.kind).toBe(kind)
    expect(result.code).toBe(code)
    const error = resumeCheckError(result)
    expect(InterludeError.isInstance(error)).toBe(true)
    expect(error.code).toBe(code)
    expect((error.details as { problems: unknown[] }).problems.length).toBeGreaterThan(0)
  })

  it('reports partial vs empty coverage and names the missing ids', () => {
    const partial = failed(checkResume(pending, [{ interruptId: 'int_a', status: 'cancelled' }], { now: NOW }))
    expect(partial.problems).toContainEqual({ kind: 'missing', interruptIds: ['int_b'], partial: true })
    const empty = failed(checkResume(pending, [], { now: NOW }))
    expect(empty.problems).toContainEqual({ kind: 'missing', interruptIds: ['int_a', 'int_b'], partial: false })
  })

  it('refuses any resume when nothing is pending', () => {
    const result = failed(checkResume([], [{ interruptId: 'int_a', status: 'cancelled' }], { now: NOW }))
    expect(result.code).toBe('RESUME_NOTHING_PENDING')
  })

  it('reports every problem, the most fundamental first', () => {
    const result = failed(
      checkResume(
        pending,
        [
          { interruptId: 'int_z', status: 'cancelled' },
          { interruptId: 'int_a', status: 'nope' },
        ],
        { now: NOW },
      ),
    )
    expect(result.problems.map((p) => p.kind)).toEqual(['bad_status', 'unknown', 'missing'])
    expect(result.code).toBe('INVALID_INPUT')
  })

  describe('expiry', () => {
    const expiring: Interrupt[] = [
      { id: 'int_a', reason: 'tool_call', toolCallId: 'tc_a', expiresAt: earlier },
      { id: 'int_b', reason: 'confirmation', expiresAt: later },
    ]
    const approveAll = [
      { interruptId: 'int_a', status: 'resolved', payload: { approved: true } },
      { interruptId: 'int_b', status: 'resolved', payload: { approved: true } },
    ]
    const cancelAll = [
      { interruptId: 'int_a', status: 'cancelled' },
      { interruptId: 'int_b', status: 'cancelled' },
    ]

    it('refuses resolved answers once any interrupt of the batch has expired', () => {
      const result = failed(checkResume(expiring, approveAll, { now: NOW }))
      expect(result.code).toBe('INTERRUPT_EXPIRED')
      expect(result.problems).toContainEqual({ kind: 'expired', interruptIds: ['int_a'] })
    })

    it('lets an all-cancelled resume close an expired batch (server policy)', () => {
      const result = checkResume(expiring, cancelAll, { now: NOW })
      expect(result).toMatchObject({ ok: true, allCancelled: true, expired: true })
    })

    it('refuses even cancellation under the client policy', () => {
      expect(failed(checkResume(expiring, cancelAll, { now: NOW, expiry: 'refuse-all' })).code).toBe(
        'INTERRUPT_EXPIRED',
      )
    })

    it('uses the given clock: the instant of expiry is already expired', () => {
      const exact: Interrupt[] = [{ id: 'i', reason: 'confirmation', expiresAt: new Date(NOW).toISOString() }]
      const entries = [{ interruptId: 'i', status: 'resolved', payload: {} }]
      expect(checkResume(exact, entries, { now: NOW - 1 }).ok).toBe(true)
      expect(checkResume(exact, entries, { now: NOW }).ok).toBe(false)
    })
  })
})

describe('checkResumeShape', () => {
  it('checks only what does not depend on the batch', () => {
    expect(checkResumeShape([{ interruptId: 'anything', status: 'cancelled' }])).toEqual({ ok: true })
    expect(checkResumeShape([])).toEqual({ ok: true })
    const dup = checkResumeShape([
      { interruptId: 'x', status: 'cancelled' },
      { interruptId: 'x', status: 'cancelled' },
    ])
    expect(dup).toMatchObject({ ok: false, code: 'RESUME_DUPLICATE_ENTRY' })
    expect(checkResumeShape('nope')).toMatchObject({ ok: false, code: 'INVALID_INPUT' })
    expect(checkResumeShape([{ interruptId: 'x', status: 'cancelled', payload: 1 }])).toMatchObject({
      ok: false,
      code: 'INVALID_INPUT',
    })
  })
})
