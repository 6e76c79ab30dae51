import type { MiddlewareHandler } from 'hono'
import { cors } from 'hono/cors'
import type { CorsOptions } from '../../config/cors-options.ts'
import type { ServerEnv } from '../env.ts'

/**
 * Hono's maintained CORS middleware with the API's needs: preflights answered before authentication, the headers
 * a client sends (`Authorization`, `Last-Event-ID`) allowed, `Server-Timing` readable. Origins not listed get no
 * CORS headers at all, so the browser refuses the answer.
 */
export function corsMiddleware(options: CorsOptions): MiddlewareHandler<ServerEnv> {
  const any = options.origins.length === 1 && options.origins[0] === '*'
  const allowed = new Set(options.origins)
  return cors({
    origin: any ? '*' : (origin) => (allowed.has(origin) ? origin : null),
    // DELETE: an allowed app revokes remembered rules (docs/approvals.md#remembered-permissions).
    allowMethods: ['GET', 'POST', 'DELETE', 'OPTIONS'],
    allowHeaders: ['Authorization', 'Content-Type', 'Last-Event-ID'],
    exposeHeaders: ['Server-Timing'],
    credentials: options.credentials ?? false,
    maxAge: options.maxAgeSeconds ?? 600,
  })
}
