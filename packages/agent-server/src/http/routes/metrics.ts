import type { Hono, MiddlewareHandler } from 'hono'
import { InterludeError } from '@interlude/protocol'
import type { ServerMetrics } from '../../observability/metrics.ts'
import type { ServerEnv } from '../env.ts'

/**
 * `GET {base}/metrics`: the Prometheus text, for the principals named in `principals` only (a scraper sends a bearer
 * token like any client). Anybody else authenticated gets `404 NOT_FOUND`, as for a route that does not exist.
 */
export function registerMetricsRoute(
  app: Hono<ServerEnv>,
  basePath: string,
  auth: MiddlewareHandler<ServerEnv>,
  deps: { readonly metrics: ServerMetrics; readonly principals: readonly string[] },
): void {
  const allowed = new Set(deps.principals)
  app.get(`${basePath}/metrics`, auth, async (c) => {
    if (!allowed.has(c.get('principal'))) throw new InterludeError('NOT_FOUND', 'No such route.')
    return c.body(await deps.metrics.text(), 200, { 'Content-Type': deps.metrics.contentType })
  })
}
