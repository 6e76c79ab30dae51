import type { MiddlewareHandler } from 'hono'
import { InterludeError } from '@interlude/protocol'
import { checkIdentifier } from '../core/admission/parse-input.ts'
import type { ServerEnv } from './env.ts'

/**
 * The one check of ids in paths (docs/decisions.md#operating-it): `{base}/threads/:threadId/…` and `…/runs/:runId/…` must be ids the
 * protocol accepts (1–200 printable ASCII, docs/protocol.md#limits) before any route or store sees them, so every
 * store answers `400 INVALID_INPUT` for a NUL, a newline or an over-long id alike.
 */
export function idParams(basePath: string): MiddlewareHandler<ServerEnv> {
  const prefix = `${basePath}/threads/`
  return async function idParams(c, next) {
    // The raw path, split before decoding, as the router does (a `%2F` stays inside its segment).
    const path = new URL(c.req.url).pathname
    if (path.startsWith(prefix)) {
      const segments = path.slice(prefix.length).split('/')
      check('threadId', segments[0])
      if (segments[1] === 'runs' && segments.length > 2) check('runId', segments[2])
    }
    await next()
  }
}

function check(field: string, raw: string | undefined): void {
  if (raw === undefined) return
  let value: string
  try {
    value = decodeURIComponent(raw)
  } catch {
    throw new InterludeError('INVALID_INPUT', `${field} is not a valid percent-encoded path segment.`, {
      details: { field },
    })
  }
  checkIdentifier(field, value)
}
