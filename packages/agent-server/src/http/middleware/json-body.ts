import type { MiddlewareHandler } from 'hono'
import { InterludeError } from '@interlude/protocol'
import type { Limits } from '../../core/limits.ts'
import type { ServerEnv } from '../env.ts'

/** The body limit was hit: answered with `Connection: close` (the rest of the body is discarded, not parsed). */
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

/** How much of an oversized body is still read (and discarded) so the 413 reaches the client. */
const DRAIN_MAX_BYTES = 64 * 1024 * 1024
const DRAIN_MAX_MS = 5000

/**
 * Lingering close: reads and discards the rest of an oversized body (bounded in bytes and time),
 * so the client finishes sending and then reads the 413 — closing a socket with unread data would
 * reset it, and the client would see EPIPE/ECONNRESET instead of the answer. Beyond the bounds the
 * body is cancelled (the connection is dropped).
 */
async function discardRest(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<void> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), DRAIN_MAX_MS)
    timer.unref()
  })
  let drained = 0
  try {
    for (;;) {
      const next = await Promise.race([reader.read(), timeout])
      if (next === 'timeout') break
      if (next.done) return
      drained += next.value.byteLength
      if (drained > DRAIN_MAX_BYTES) break
    }
  } catch {
    return
  } finally {
    clearTimeout(timer)
  }
  await reader.cancel().catch(() => undefined)
}

export interface JsonBodyLimits {
  readonly maxBytes: number
  /** @default unlimited */
  readonly maxDepth?: number
}

/** Reads at most `maxBytes` of the body (never buffering more), as strict UTF-8 JSON of at most `maxDepth` levels. */
export async function readJsonBody(request: Request, limits: number | JsonBodyLimits): Promise<unknown> {
  const { maxBytes, maxDepth } = typeof limits === 'number' ? { maxBytes: limits, maxDepth: undefined } : limits
  const declared = request.headers.get('content-length')
  const chunks: Uint8Array[] = []
  let total = 0
  if (request.body) {
    const reader = request.body.getReader()
    if (declared !== null && Number(declared) > maxBytes) {
      await discardRest(reader)
      throw new BodyTooLarge(maxBytes)
    }
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      total += value.byteLength
      if (total > maxBytes) {
        await discardRest(reader)
        throw new BodyTooLarge(maxBytes)
      }
      chunks.push(value)
    }
  } else if (declared !== null && Number(declared) > maxBytes) {
    throw new BodyTooLarge(maxBytes)
  }
  let text: string
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(chunks))
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
  if (maxDepth !== undefined && exceedsJsonDepth(body, maxDepth)) {
    throw new InterludeError('INVALID_INPUT', `The request body nests JSON deeper than ${maxDepth} levels.`, {
      details: { reason: 'too_deep', maxDepth },
    })
  }
  return body
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
 * An oversized body is answered with `Connection: close` after its rest was discarded (bounded):
 * the connection is not reused for the client's next request, and it is closed cleanly.
 */
export function jsonBody(limits: Pick<Limits, 'maxBodyBytes' | 'maxJsonDepth'>): MiddlewareHandler<ServerEnv> {
  return async function jsonBody(c, next) {
    checkJsonContentType(c.req.header('content-type'))
    let body: unknown
    try {
      body = await readJsonBody(c.req.raw, { maxBytes: limits.maxBodyBytes, maxDepth: limits.maxJsonDepth })
    } catch (error) {
      if (!(error instanceof BodyTooLarge)) throw error
      // HTTP/2 forbids connection-specific headers (and multiplexes: nothing to close).
      return c.json(error.toEnvelope(), 413, isHttp2(c.env) ? {} : { Connection: 'close' })
    }
    c.set('body', body)
    return next()
  }
}
