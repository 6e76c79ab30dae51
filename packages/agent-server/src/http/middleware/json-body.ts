import type { IncomingMessage } from 'node:http'
import type { MiddlewareHandler } from 'hono'
import { InterludeError } from '@interlude/protocol'
import type { Limits } from '../../config/limits.ts'
import type { ServerEnv } from '../env.ts'
import type { BodyBudget } from './body-budget.ts'
import { retryAfterOf } from './rate-limited.ts'
import { http1Incoming, leaveBodyUnread } from './unread-body.ts'

/** The body limit was hit: answered with `Connection: close` (the rest of the body is never read). */
class BodyTooLarge extends InterludeError {
  constructor(max: number) {
    super('PAYLOAD_TOO_LARGE', `The request body is larger than ${max} bytes.`, {
      details: { limit: 'maxBodyBytes', max },
    })
  }
}

/**
 * Whether a parsed JSON value nests objects/arrays deeper than `maxDepth` (the value itself is
 * depth 1). Iterative on purpose: `JSON.parse` accepts any depth, but `JSON.stringify` and every
 * recursive walk after it overflow the stack on ~10⁴–10⁵ levels.
 */
export function exceedsJsonDepth(value: unknown, maxDepth: number): boolean {
  if (typeof value !== 'object' || value === null) return false
  const stack: [object, number][] = [[value, 1]]
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    const [node, depth] = item
    if (depth > maxDepth) return true
    const children: unknown[] = Array.isArray(node) ? node : Object.values(node)
    for (const child of children) if (typeof child === 'object' && child !== null) stack.push([child, depth + 1])
  }
  return false
}

/**
 * Whether JSON text nests objects/arrays deeper than `maxDepth`, decided on the raw UTF-8 bytes before `JSON.parse`:
 * V8 parses a deeply nested 8 MiB body in seconds on the event loop (measured 5.6 s for 4 Mi nested arrays), while
 * this scan stops at the first level too deep. Exact for valid JSON (brackets inside strings are skipped, and
 * multi-byte UTF-8 sequences never contain ASCII bytes); invalid JSON is refused by the parse anyway.
 */
export function jsonTextExceedsDepth(bytes: Uint8Array, maxDepth: number): boolean {
  let depth = 0
  let inString = false
  let escaped = false
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i]!
    if (inString) {
      if (escaped) escaped = false
      else if (c === 0x5c) escaped = true
      else if (c === 0x22) inString = false
    } else if (c === 0x22) inString = true
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > maxDepth) return true
    } else if (c === 0x5d || c === 0x7d) depth--
  }
  return false
}

export interface JsonBodyLimits {
  readonly maxBytes: number
  /** @default unlimited */
  readonly maxDepth?: number
  /** The server-wide budget of buffered bodies, and whom to charge (`RATE_LIMITED` / `SERVER_BUSY` when full). */
  readonly budget?: { readonly bodies: BodyBudget; readonly principal: string }
  /** A body that sends nothing for this long is refused (`INVALID_INPUT`, `reason: 'body_timeout'`). @default none */
  readonly idleTimeoutMs?: number
}

/** Refused before the body was (completely) read: the rest is left unread and the connection closed. */
class BodyRefused extends Error {
  constructor(readonly refusal: InterludeError) {
    super(refusal.message)
  }
}

const IDLE = Symbol('idle')

/** What the body is read through: a web stream's reader, or `incomingReader` over Node's own request. */
type BodyReader = Pick<ReadableStreamDefaultReader<Uint8Array>, 'read' | 'releaseLock'>

/**
 * Reads Node's own request, one chunk at a time (paused in between, so nothing is read ahead of the limit checks):
 * the bytes @hono/node-server's `Request` body would give, without building a web `Request` and stream for every
 * request — with them the body cost ~30 % of the server's time in a burst of 100 small resumes
 * (packages/agent-server/bench/README.md). `releaseLock` stops reading, as on a web stream's reader.
 */
function incomingReader(incoming: IncomingMessage): BodyReader {
  const queue: Buffer[] = []
  let ended = incoming.readableEnded
  let failure: unknown
  let wake: (() => void) | undefined
  const onData = (chunk: Buffer) => {
    queue.push(chunk)
    incoming.pause()
    wake?.()
  }
  const onEnd = () => {
    ended = true
    wake?.()
  }
  const onClose = () => {
    if (!ended) failure ??= new Error('The request was aborted before its body ended.')
    wake?.()
  }
  const onError = (error: unknown) => {
    failure ??= error
    wake?.()
  }
  const detach = () => {
    incoming.off('data', onData).off('end', onEnd).off('close', onClose).off('error', onError)
  }
  if (incoming.destroyed && !ended) {
    // Gone before the body was read (a client that dropped during authentication, or half-closed after sending
    // everything): no event comes any more. What arrived is still buffered; a complete body is read from there.
    for (let chunk = incoming.read() as Buffer | null; chunk !== null; chunk = incoming.read() as Buffer | null)
      queue.push(chunk)
    if (incoming.complete) ended = true
    else failure = incoming.errored ?? new Error('The request was aborted before its body ended.')
  } else incoming.on('data', onData).on('end', onEnd).on('close', onClose).on('error', onError)
  return {
    async read() {
      for (;;) {
        const value = queue.shift()
        if (value !== undefined) return { done: false, value }
        if (ended) {
          detach()
          return { done: true, value: undefined }
        }
        if (failure !== undefined) {
          detach()
          throw failure
        }
        await new Promise<void>((resolve) => {
          wake = resolve
          incoming.resume()
        })
        wake = undefined
      }
    },
    releaseLock() {
      detach()
      incoming.pause()
    },
  }
}

/** Bodies up to this size are not charged to the body budget (see `reserve` in `readJsonBody`). */
export const SMALL_BODY_BYTES = 64 * 1024

/**
 * Lets go of the body without reading more of it. Not `cancel()`: on a plain `Readable.toWeb` body that destroys the
 * Node request and with it the socket, before the answer is written.
 */
function stopReading(reader: BodyReader): void {
  try {
    reader.releaseLock()
  } catch {
    // Already released.
  }
}

/** One read, or `IDLE` when nothing arrived for `ms`. */
async function readWithin(
  reader: BodyReader,
  ms: number | undefined,
): Promise<ReadableStreamReadResult<Uint8Array> | typeof IDLE> {
  if (ms === undefined || ms <= 0) return reader.read()
  let timer: NodeJS.Timeout | undefined
  const idle = new Promise<typeof IDLE>((resolve) => {
    timer = setTimeout(() => resolve(IDLE), ms)
  })
  try {
    return await Promise.race([reader.read(), idle])
  } finally {
    clearTimeout(timer)
  }
}

/**
 * Reads at most `maxBytes` of the body (never buffering more, nor more than the budget grants), as strict UTF-8 JSON
 * of at most `maxDepth` levels (checked on the bytes, before parsing). From `incoming` (Node's HTTP/1 request, under
 * @hono/node-server) when given, otherwise from `request.body`.
 */
export async function readJsonBody(
  request: Request,
  limits: number | JsonBodyLimits,
  incoming?: IncomingMessage,
): Promise<unknown> {
  const options: JsonBodyLimits = typeof limits === 'number' ? { maxBytes: limits } : limits
  const { maxBytes, maxDepth, budget, idleTimeoutMs } = options
  const declaredText = incoming ? (incoming.headers['content-length'] ?? null) : request.headers.get('content-length')
  const declared = declaredText === null ? undefined : Number(declaredText)
  const chunks: Uint8Array[] = []
  let total = 0
  let reserved = 0
  /** The reader in use, for the catch below. */
  let reading: BodyReader | undefined
  const reserve = (bytes: number) => {
    // Small bodies are not counted: the connection caps bound them (maxConnections x 64 KiB), and so a principal's
    // decision or message still gets through while others hold the budget with large bodies.
    if (!budget || bytes <= reserved || bytes <= SMALL_BODY_BYTES) return
    budget.bodies.reserve(budget.principal, bytes - reserved)
    reserved = bytes
  }
  try {
    const reader = incoming ? incomingReader(incoming) : request.body?.getReader()
    reading = reader
    if (reader) {
      // Not one more byte is read: the rest stays in the kernel's buffers and `jsonBody` closes the connection.
      const refuse = (refusal: InterludeError): never => {
        stopReading(reader)
        throw new BodyRefused(refusal)
      }
      if (declared !== undefined && declared > maxBytes) refuse(new BodyTooLarge(maxBytes))
      // A declared length is reserved whole, before any byte is read; a chunked body chunk by chunk.
      try {
        if (declared !== undefined && Number.isFinite(declared)) reserve(declared)
      } catch (error) {
        if (InterludeError.isInstance(error)) refuse(error)
        throw error
      }
      for (;;) {
        const next = await readWithin(reader, idleTimeoutMs)
        if (next === IDLE) {
          stopReading(reader)
          throw new BodyRefused(
            new InterludeError('INVALID_INPUT', `The request body stalled for ${idleTimeoutMs} ms.`, {
              details: { reason: 'body_timeout', idleTimeoutMs },
            }),
          )
        }
        if (next.done) break
        total += next.value.byteLength
        if (total > maxBytes) refuse(new BodyTooLarge(maxBytes))
        try {
          reserve(total)
        } catch (error) {
          if (InterludeError.isInstance(error)) refuse(error)
          throw error
        }
        chunks.push(next.value)
      }
    } else if (declared !== undefined && declared > maxBytes) {
      throw new BodyTooLarge(maxBytes)
    }
    const bytes = Buffer.concat(chunks)
    chunks.length = 0
    if (maxDepth !== undefined && jsonTextExceedsDepth(bytes, maxDepth)) throw tooDeep(maxDepth)
    let text: string
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(bytes)
    } catch {
      throw new InterludeError('INVALID_INPUT', 'The request body is not valid UTF-8.')
    }
    if (text.trim().length === 0) throw new InterludeError('INVALID_INPUT', 'The request body is empty.')
    let body: unknown
    try {
      body = JSON.parse(text) as unknown
    } catch {
      throw new InterludeError('INVALID_INPUT', 'The request body is not valid JSON.')
    }
    // The byte scan already decided it for valid JSON; kept as the definition the limit documents.
    if (maxDepth !== undefined && exceedsJsonDepth(body, maxDepth)) throw tooDeep(maxDepth)
    return body
  } catch (error) {
    // Whatever stopped the read (a refusal already did this), not one more byte is read and no listener stays.
    if (reading) stopReading(reading)
    throw error
  } finally {
    if (budget && reserved > 0) budget.bodies.release(budget.principal, reserved)
  }
}

function tooDeep(maxDepth: number): InterludeError {
  return new InterludeError('INVALID_INPUT', `The request body nests JSON deeper than ${maxDepth} levels.`, {
    details: { reason: 'too_deep', maxDepth },
  })
}

function checkJsonContentType(type: string | undefined): void {
  // Requiring a JSON content type also keeps cookie-authenticated routes out of reach of
  // cross-site "simple" requests (forms, no-cors fetch), which cannot send it.
  if (type === undefined || !/^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i.test(type)) {
    throw new InterludeError('INVALID_INPUT', 'The request must be sent as application/json.')
  }
}

/** For state-changing routes without a body (e.g. cancel): only the content type is required. */
export const requireJsonContentType: MiddlewareHandler<ServerEnv> = async (c, next) => {
  checkJsonContentType(c.req.header('content-type'))
  await next()
}

/** With `@hono/node-server`, `env.incoming` is the Node request. */
function isHttp2(env: unknown): boolean {
  const incoming = (env as { incoming?: { httpVersionMajor?: unknown } } | undefined)?.incoming
  return incoming?.httpVersionMajor === 2
}

/**
 * Content type, then body limit, then JSON (and its depth): the parsed body is `c.get('body')`.
 * A refused body (too large, over the body budget, stalled) is answered with `Connection: close` and the rest of it is
 * never read (`leaveBodyUnread`): the connection is half-closed after the answer and destroyed shortly after.
 */
export function jsonBody(
  limits: Pick<Limits, 'maxBodyBytes' | 'maxJsonDepth'> & Partial<Pick<Limits, 'bodyIdleTimeoutMs'>>,
): MiddlewareHandler<ServerEnv> {
  return async function jsonBody(c, next) {
    checkJsonContentType(c.req.header('content-type'))
    let body: unknown
    // Set by the quota middleware: the process's budget of buffered bodies.
    const bodies = c.get('bodyBudget')
    try {
      body = await readJsonBody(
        c.req.raw,
        {
          maxBytes: limits.maxBodyBytes,
          maxDepth: limits.maxJsonDepth,
          ...(bodies ? { budget: { bodies, principal: c.get('principal') } } : {}),
          ...(limits.bodyIdleTimeoutMs ? { idleTimeoutMs: limits.bodyIdleTimeoutMs } : {}),
        },
        http1Incoming(c.env),
      )
    } catch (error) {
      const refusal = error instanceof BodyRefused ? error.refusal : error instanceof BodyTooLarge ? error : undefined
      if (!refusal) throw error
      const retryAfter = retryAfterOf(refusal)
      leaveBodyUnread(c.env)
      // HTTP/2 forbids connection-specific headers (and multiplexes: nothing to close).
      return c.json(refusal.toEnvelope(), refusal.status as 413, {
        ...(isHttp2(c.env) ? {} : { Connection: 'close' }),
        ...(retryAfter !== undefined ? { 'Retry-After': retryAfter } : {}),
      })
    }
    c.set('body', body)
    return next()
  }
}
