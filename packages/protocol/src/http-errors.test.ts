import { once } from 'node:events'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { describe, expect, it } from 'vitest'
import type { ErrorCode } from './errors.ts'
import { ERROR_CODES, InterludeError } from './errors.ts'
import {
  errorFromFetch,
  errorFromResponse,
  errorFromStatus,
  MAX_ERROR_BODY_BYTES,
  statusErrorCode,
} from './http-errors.ts'

/** Every row of the status table, and what falls through to the ranges. */
const ROWS: readonly (readonly [status: number, code: ErrorCode, retryable: boolean])[] = [
  [400, 'INVALID_INPUT', false],
  [401, 'UNAUTHENTICATED', false],
  [403, 'UNAUTHENTICATED', false],
  [404, 'NOT_FOUND', false],
  [408, 'NETWORK_ERROR', true],
  [413, 'PAYLOAD_TOO_LARGE', false],
  [429, 'RATE_LIMITED', true],
  // Other 4xx: the request was refused by something that is not Interlude.
  [405, 'INVALID_INPUT', false],
  [409, 'INVALID_INPUT', false],
  [410, 'INVALID_INPUT', false],
  [422, 'INVALID_INPUT', false],
  [499, 'INVALID_INPUT', false],
  // 5xx: a proxy's page or a crash; a retry may help.
  [500, 'NETWORK_ERROR', true],
  [501, 'NETWORK_ERROR', true],
  [502, 'NETWORK_ERROR', true],
  [503, 'NETWORK_ERROR', true],
  [504, 'NETWORK_ERROR', true],
  [599, 'NETWORK_ERROR', true],
  // Not an error status at all (an unfollowed redirect reaching the error path).
  [302, 'PROTOCOL_ERROR', true],
  [304, 'PROTOCOL_ERROR', true],
]

const envelope = (code: string, message = 'From the server.', details?: unknown) =>
  JSON.stringify({ error: details === undefined ? { code, message } : { code, message, details } })

const answer = (status: number, body: BodyInit | null, type = 'application/json') =>
  new Response(status === 304 ? null : body, { status, headers: { 'Content-Type': type } })

describe('errorFromStatus / errorFromResponse: the status table', () => {
  it.each(ROWS)('HTTP %i without an envelope is %s (retryable: %s)', async (status, code, retryable) => {
    for (const error of [errorFromStatus(status), await errorFromResponse(answer(status, '<html>Oops</html>'))]) {
      expect(error).toBeInstanceOf(InterludeError)
      expect(error.code).toBe(code)
      expect(error.retryable).toBe(retryable)
      expect(error.message).toBe(`The server answered HTTP ${status} without an error envelope.`)
      expect(error.details).toEqual({ reason: 'no_envelope', status })
    }
  })

  it.each(ROWS.filter(([status]) => status !== 304))('HTTP %i with an envelope: its code wins', async (status) => {
    // A code the status alone would not give, with details, and one that agrees with the status.
    const other: ErrorCode = ERROR_CODES[statusErrorCode(status)].retryable ? 'DECISION_CONFLICT' : 'STORE_UNAVAILABLE'
    const error = await errorFromResponse(answer(status, envelope(other, 'Decided.', { runId: 'r1' })))
    expect(error.code).toBe(other)
    expect(error.message).toBe('Decided.')
    expect(error.details).toEqual({ runId: 'r1' })
    expect(error.retryable).toBe(ERROR_CODES[other].retryable)
    const same = await errorFromResponse(answer(status, envelope(statusErrorCode(status))))
    expect(same.code).toBe(statusErrorCode(status))
    expect(same.message).toBe('From the server.')
    expect(same.details).toBeUndefined()
  })

  it('a status row names the code whose own status it is (403 and 408 are the documented exceptions)', () => {
    for (const status of [400, 401, 404, 413, 429]) expect(ERROR_CODES[statusErrorCode(status)].status).toBe(status)
    expect(ERROR_CODES[statusErrorCode(403)].status).toBe(401) // no code of its own: refused credentials
    expect(ERROR_CODES[statusErrorCode(408)].status).toBe(503) // a timeout: retryable like a dropped connection
    expect(ERROR_CODES[statusErrorCode(502)].status).toBe(503)
  })

  it('statuses outside the table fall into their range; statuses a Response cannot carry too', () => {
    expect(statusErrorCode(0)).toBe('PROTOCOL_ERROR')
    expect(statusErrorCode(101)).toBe('PROTOCOL_ERROR')
    expect(statusErrorCode(418)).toBe('INVALID_INPUT')
    expect(statusErrorCode(600)).toBe('PROTOCOL_ERROR')
  })

  it('429 keeps RATE_LIMITED with its details from the envelope, and is RATE_LIMITED without one', async () => {
    const details = { quota: 'requestsPerSecond', limit: 100, retryAfterSeconds: 1 }
    const withEnvelope = await errorFromResponse(answer(429, envelope('RATE_LIMITED', 'Slow down.', details)))
    expect(withEnvelope).toMatchObject({ code: 'RATE_LIMITED', details, retryable: true, status: 429 })
    const bare = await errorFromResponse(answer(429, 'Too Many Requests', 'text/plain'))
    expect(bare).toMatchObject({
      code: 'RATE_LIMITED',
      retryable: true,
      details: { reason: 'no_envelope', status: 429 },
    })
  })
})

describe('errorFromResponse: bodies that are not an envelope', () => {
  const bodies: [string, BodyInit | null][] = [
    ['no body', null],
    ['an empty body', ''],
    ['HTML', '<html><body>502 Bad Gateway: upstream secret-host:5432</body></html>'],
    ['truncated JSON', '{"error":{"code":"THREAD_BUSY","mess'],
    ['a JSON string', '"THREAD_BUSY"'],
    ['JSON null', 'null'],
    ['a JSON array', '[{"error":{"code":"THREAD_BUSY","message":"m"}}]'],
    ['an unknown code', envelope('NOT_A_CODE')],
    ['a non-string message', JSON.stringify({ error: { code: 'THREAD_BUSY', message: 42 } })],
    ['a string error', JSON.stringify({ error: 'THREAD_BUSY' })],
    ['invalid UTF-8', new Uint8Array([0x7b, 0xff, 0xfe, 0x7d])],
  ]

  it.each(bodies)('%s: by status, and the body never becomes the message', async (_name, body) => {
    const error = await errorFromResponse(answer(409, body, 'text/html'))
    expect(error.code).toBe('INVALID_INPUT')
    expect(error.message).toBe('The server answered HTTP 409 without an error envelope.')
    expect(error.details).toEqual({ reason: 'no_envelope', status: 409 })
    expect(JSON.stringify({ message: error.message, details: error.details })).not.toMatch(/secret|THREAD_BUSY/)
  })

  it('reads an envelope whatever its content type, and one exactly at the size limit', async () => {
    expect((await errorFromResponse(answer(409, envelope('THREAD_BUSY'), 'text/plain'))).code).toBe('THREAD_BUSY')
    const head = envelope('THREAD_BUSY', '')
    const padded = head.replace('"message":""', `"message":"${'x'.repeat(MAX_ERROR_BODY_BYTES - head.length)}"`)
    expect(new TextEncoder().encode(padded).byteLength).toBe(MAX_ERROR_BODY_BYTES)
    expect((await errorFromResponse(answer(409, padded))).code).toBe('THREAD_BUSY')
  })

  it('a body over the limit is not read whole: no envelope, the rest cancelled', async () => {
    const huge = envelope('THREAD_BUSY', 'x'.repeat(MAX_ERROR_BODY_BYTES))
    const error = await errorFromResponse(answer(503, huge))
    expect(error).toMatchObject({ code: 'NETWORK_ERROR', details: { reason: 'no_envelope', status: 503 } })
    // A body that never ends: read up to the limit, then cancelled.
    let pulled = 0
    let cancelled = false
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled += 1
        controller.enqueue(new Uint8Array(16 * 1024).fill(0x20))
      },
      cancel() {
        cancelled = true
      },
    })
    expect((await errorFromResponse(new Response(endless, { status: 502 }))).code).toBe('NETWORK_ERROR')
    expect(cancelled).toBe(true)
    expect(pulled).toBeLessThan(10)
  })

  it('a body that fails while it is read is no envelope', async () => {
    const failing = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"error":'))
        controller.error(new Error('socket hang up at 10.0.0.7'))
      },
    })
    const error = await errorFromResponse(new Response(failing, { status: 500 }))
    expect(error).toMatchObject({
      code: 'NETWORK_ERROR',
      message: 'The server answered HTTP 500 without an error envelope.',
    })
  })

  it('over real HTTP: an endless error body is cut off and its connection closed', async () => {
    const server = createServer((_req, res) => {
      res.writeHead(502, { 'Content-Type': 'text/html' })
      const chunk = Buffer.alloc(16 * 1024, 0x20)
      const write = () => {
        while (!res.destroyed && res.write(chunk));
      }
      res.on('drain', write)
      write()
    })
    const closed = new Promise<void>((resolve) => server.on('connection', (socket) => socket.on('close', resolve)))
    server.listen(0, '127.0.0.1')
    await once(server, 'listening')
    try {
      const { port } = server.address() as AddressInfo
      const response = await fetch(`http://127.0.0.1:${port}/`)
      const error = await errorFromResponse(response)
      expect(error).toMatchObject({ code: 'NETWORK_ERROR', details: { reason: 'no_envelope', status: 502 } })
      await closed
    } finally {
      server.closeAllConnections()
      server.close()
    }
  })
})

describe('errorFromFetch', () => {
  it('a failed fetch is NETWORK_ERROR with a fixed message; the original only in cause', () => {
    const raw = new TypeError('fetch failed: getaddrinfo ENOTFOUND internal.example')
    const error = errorFromFetch(raw, new AbortController().signal)
    expect(error).toMatchObject({ code: 'NETWORK_ERROR', message: 'The connection failed.', retryable: true })
    expect(error.cause).toBe(raw)
    expect(errorFromFetch('boom')).toMatchObject({ code: 'NETWORK_ERROR', message: 'The connection failed.' })
    expect(errorFromFetch(undefined).code).toBe('NETWORK_ERROR')
  })

  it("the caller's aborted signal, or an abort error, is ABORTED (not retryable)", () => {
    const controller = new AbortController()
    controller.abort()
    expect(errorFromFetch(new TypeError('terminated'), controller.signal)).toMatchObject({
      code: 'ABORTED',
      message: 'The request was aborted.',
      retryable: false,
    })
    expect(errorFromFetch(new DOMException('The operation was aborted.', 'AbortError')).code).toBe('ABORTED')
    const timeout = AbortSignal.abort(new DOMException('timed out', 'TimeoutError'))
    expect(errorFromFetch(timeout.reason, timeout).code).toBe('ABORTED')
  })

  it('an InterludeError passes through unchanged', () => {
    const own = new InterludeError('PROTOCOL_ERROR', 'Bad frame.', { details: { reason: 'invalid_json' } })
    expect(errorFromFetch(own)).toBe(own)
  })

  it('over real HTTP: a refused connection', async () => {
    const server = createServer()
    server.listen(0, '127.0.0.1')
    await once(server, 'listening')
    const { port } = server.address() as AddressInfo
    server.close()
    await once(server, 'close')
    const error = await fetch(`http://127.0.0.1:${port}/`).then(
      () => undefined,
      (raw: unknown) => errorFromFetch(raw),
    )
    expect(error).toMatchObject({ code: 'NETWORK_ERROR', message: 'The connection failed.' })
  })
})
