import type { MiddlewareHandler } from 'hono'
import { InterludeError } from '@interlude/protocol'
import type { Authenticate } from '../../auth/authenticate.ts'
import type { ServerEnv } from '../env.ts'

/** Resolves the principal of every request (401 `UNAUTHENTICATED` when there is none). */
export function auth(authenticate: Authenticate): MiddlewareHandler<ServerEnv> {
  return async function auth(c, next) {
    const result = await authenticate(c.req.raw)
    if (!result) throw new InterludeError('UNAUTHENTICATED', 'Authentication required.')
    // Set before the handler runs so that error and streaming responses carry it too.
    if (result.setCookie) c.header('Set-Cookie', result.setCookie, { append: true })
    c.set('principal', result.principal)
    await next()
  }
}
