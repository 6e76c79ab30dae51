import type { MiddlewareHandler } from 'hono'
import { InterludeError } from '@interlude/protocol'
import type { ServerEnv } from '../env.ts'

const tooLarge = (max: number) =>
  new InterludeError('PAYLOAD_TOO_LARGE', `The request body is larger than ${max} bytes.`, { details: { limit: 'maxBodyBytes', max } })

/** Reads at most `maxBytes` of the body (never buffering more), as strict UTF-8 JSON. */
export async function readJsonBody(request: Request, maxBytes: number): Promise<unknown> {
  const declared = request.headers.get('content-length')
  if (declared !== null && Number(declared) > maxBytes) throw tooLarge(maxBytes)
  const chunks: Uint8Array[] = []
  let total = 0
  if (request.body) {
    const reader = request.body.getReader()
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      total += value.byteLength
      if (total > maxBytes) {
        await reader.cancel().catch(() => undefined)
        throw tooLarge(maxBytes)
      }
      chunks.push(value)
    }
  }
  let text: string
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(chunks))
  } catch {
    throw new InterludeError('INVALID_INPUT', 'The request body is not valid UTF-8.')
  }
  if (text.trim().length === 0) throw new InterludeError('INVALID_INPUT', 'The request body is empty.')
  try {
    return JSON.parse(text) as unknown
  } catch {
    throw new InterludeError('INVALID_INPUT', 'The request body is not valid JSON.')
  }
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

/** Body-limit + JSON middleware: the parsed body is `c.get('body')`. */
export function jsonBody(maxBytes: number): MiddlewareHandler<ServerEnv> {
  return async function jsonBody(c, next) {
    checkJsonContentType(c.req.header('content-type'))
    c.set('body', await readJsonBody(c.req.raw, maxBytes))
    await next()
  }
}
