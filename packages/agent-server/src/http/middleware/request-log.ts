import type { MiddlewareHandler } from 'hono'
import type { ServerEnv } from '../env.ts'
import type { Logger } from '../../observability/logger.ts'
import type { ServerMetrics } from '../../observability/metrics.ts'

/** `admission;dur=<ms>` of `Server-Timing` (set by the run and decision routes once admitted). */
const ADMISSION_TIMING = /(?:^|,)\s*admission;dur=([\d.]+)/

/**
 * One JSON line per request once its response starts (an SSE response: when its headers go out): `event`
 * `request`, or `request.refused` (4xx with an error code) / `request.failed` (5xx), with method, path, status,
 * `code`, principal and duration. Also makes `logger` and `metrics` available as `c.var.log` / `c.var.metrics`,
 * feeds the admission histogram and counts error envelopes by code.
 */
export function requestLog(logger: Logger, metrics: ServerMetrics): MiddlewareHandler<ServerEnv> {
  return async function requestLog(c, next) {
    const startedAt = performance.now()
    c.set('log', logger)
    c.set('metrics', metrics)
    await next()
    const status = c.res.status
    const code = c.get('errorCode')
    if (code !== undefined) metrics.refusals.inc({ code })
    const admission = ADMISSION_TIMING.exec(c.res.headers.get('server-timing') ?? '')
    if (admission) metrics.admissionSeconds.observe(Number(admission[1]) / 1000)
    const principal = c.get('principal')
    const line = {
      event: status >= 500 ? 'request.failed' : code !== undefined ? 'request.refused' : 'request',
      method: c.req.method,
      path: c.req.path,
      status,
      ...(code !== undefined ? { code } : {}),
      ...(principal !== undefined ? { principal } : {}),
      ms: Math.round((performance.now() - startedAt) * 100) / 100,
    }
    if (status >= 500) logger.error(line, 'request failed')
    else logger.info(line, code !== undefined ? 'request refused' : 'request')
  }
}
