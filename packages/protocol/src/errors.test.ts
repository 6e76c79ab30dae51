import { describe, expect, it } from 'vitest'
import {
  ADMISSION_ERROR_CODES,
  ERROR_CODES,
  InterludeError,
  httpStatusOf,
  isErrorCode,
  isErrorEnvelope,
  RUN_ERROR_CODES,
  STREAM_ERROR_CODES,
} from './errors.ts'

describe('error codes', () => {
  it('maps every code named by docs/protocol.md to its HTTP status', () => {
    const design: Record<string, number> = {
      INVALID_INPUT: 400,
      UNAUTHENTICATED: 401,
      THREAD_NOT_FOUND: 404,
      PAYLOAD_TOO_LARGE: 413,
      THREAD_BUSY: 409,
      INTERRUPTS_PENDING: 409,
      RESUME_INCOMPLETE: 422,
      RESUME_UNKNOWN_INTERRUPT: 422,
      RESUME_DUPLICATE_ENTRY: 422,
      RESUME_PAYLOAD_INVALID: 422,
      RESUME_NOTHING_PENDING: 409,
      INTERRUPT_EXPIRED: 410,
      DECISION_CONFLICT: 409,
      ALREADY_RESUMED: 409,
      ALREADY_VOTED: 409,
      THREAD_TOO_LARGE: 413,
    }
    for (const [code, status] of Object.entries(design)) {
      expect(isErrorCode(code), code).toBe(true)
      expect(httpStatusOf(code as keyof typeof ERROR_CODES), code).toBe(status)
      expect(ERROR_CODES[code as keyof typeof ERROR_CODES].kind).toBe('admission')
    }
    for (const code of ['RUN_FAILED', 'MODEL_ERROR', 'TOOL_ERROR', 'INTERNAL']) {
      expect((STREAM_ERROR_CODES as readonly string[]).includes(code)).toBe(true)
    }
  })

  it('gives every admission code a 4xx or 503 status', () => {
    for (const code of ADMISSION_ERROR_CODES) {
      const status = httpStatusOf(code)
      expect(status === 503 || (status >= 400 && status < 500), code).toBe(true)
    }
  })

  it('lets STORE_UNAVAILABLE end a stream too, and only it among admission codes', () => {
    expect([...RUN_ERROR_CODES]).toEqual([...STREAM_ERROR_CODES, 'STORE_UNAVAILABLE', 'THREAD_TOO_LARGE'])
    expect(ERROR_CODES.STORE_UNAVAILABLE).toEqual({ status: 503, kind: 'admission', retryable: true })
  })

  it('USAGE_LIMIT_EXCEEDED is a stream code with the nominal status 429 (docs/protocol.md#token-usage)', () => {
    expect((STREAM_ERROR_CODES as readonly string[]).includes('USAGE_LIMIT_EXCEEDED')).toBe(true)
    expect(ERROR_CODES.USAGE_LIMIT_EXCEEDED).toEqual({ status: 429, kind: 'stream', retryable: false })
  })

  it('rejects unknown codes', () => {
    expect(isErrorCode('NOPE')).toBe(false)
    expect(isErrorCode(42)).toBe(false)
  })
})

describe('InterludeError', () => {
  it('carries code, status, details and cause, and serialises without the cause', () => {
    const cause = new Error('db exploded at /var/secret')
    const error = new InterludeError('THREAD_BUSY', 'Thread is busy.', { details: { runId: 'r1' }, cause })
    expect(error).toBeInstanceOf(Error)
    expect(error.code).toBe('THREAD_BUSY')
    expect(error.status).toBe(409)
    expect(error.retryable).toBe(true)
    expect(error.cause).toBe(cause)
    expect(error.toEnvelope()).toEqual({
      error: { code: 'THREAD_BUSY', message: 'Thread is busy.', details: { runId: 'r1' } },
    })
    expect(JSON.stringify(error.toEnvelope())).not.toContain('secret')
  })

  it('omits details from the envelope when there are none', () => {
    expect(new InterludeError('INVALID_INPUT', 'Bad.').toEnvelope()).toEqual({
      error: { code: 'INVALID_INPUT', message: 'Bad.' },
    })
  })

  it('recognises instances across package copies through a global symbol', () => {
    const error = new InterludeError('INTERNAL', 'x')
    expect(InterludeError.isInstance(error)).toBe(true)
    // A copy from a duplicated bundle has another prototype but the same Symbol.for marker.
    const foreign = Object.assign(Object.create(null) as object, {
      [Symbol.for('@interlude/protocol/InterludeError')]: true,
    })
    expect(InterludeError.isInstance(foreign)).toBe(true)
    expect(InterludeError.isInstance(new Error('x'))).toBe(false)
    expect(InterludeError.isInstance(null)).toBe(false)
    expect(InterludeError.isInstance('INTERNAL')).toBe(false)
  })

  it('fromUnknown never exposes a raw exception message', () => {
    const raw = new TypeError("Cannot read properties of undefined (reading 'x')")
    const error = InterludeError.fromUnknown(raw)
    expect(error.code).toBe('INTERNAL')
    expect(error.message).toBe('Internal error')
    expect(error.cause).toBe(raw)
    const same = new InterludeError('TOOL_ERROR', 'Tool failed.')
    expect(InterludeError.fromUnknown(same)).toBe(same)
    expect(InterludeError.fromUnknown('boom', 'MODEL_ERROR', 'Model failed.').toEnvelope()).toEqual({
      error: { code: 'MODEL_ERROR', message: 'Model failed.' },
    })
  })

  it('rebuilds errors from envelopes and refuses anything else', () => {
    const rebuilt = InterludeError.fromEnvelope({
      error: { code: 'ALREADY_RESUMED', message: 'm', details: { runId: 'r9' } },
    })
    expect(rebuilt?.code).toBe('ALREADY_RESUMED')
    expect(rebuilt?.details).toEqual({ runId: 'r9' })
    expect(InterludeError.fromEnvelope({ error: { code: 'WHAT', message: 'm' } })).toBeUndefined()
    expect(InterludeError.fromEnvelope({ error: 'x' })).toBeUndefined()
    expect(InterludeError.fromEnvelope('<html>')).toBeUndefined()
    expect(isErrorEnvelope({ error: { code: 'INVALID_INPUT', message: 1 } })).toBe(false)
  })
})
