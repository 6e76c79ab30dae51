import type { Logger } from '../observability/logger.ts'
import type { ServerMetrics } from '../observability/metrics.ts'
import type { BodyBudget } from './middleware/body-budget.ts'

/** Hono variables set by the middleware of the agent server. */
export interface ServerEnv {
  Variables: {
    /** The authenticated principal (thread owner). */
    principal: string
    /** Whom the per-principal quotas charge: the principal, or `address:<ip>` for an anonymous one (auth.ts). */
    quotaKey: string | undefined
    /** The parsed JSON body (after the body limit). */
    body: unknown
    /** The server's structured logger (http/middleware/request-log.ts). */
    log: Logger
    /** The server's Prometheus metrics, e.g. `c.var.metrics.recordQuotaRefusal(reason)`. */
    metrics: ServerMetrics
    /** The code of the error envelope this request was answered with (set by the error handler). */
    errorCode: string | undefined
    /** The process's budget of buffered request bodies (`BodyBudget`), set by the quota middleware. */
    bodyBudget: BodyBudget | undefined
    /** The open-stream slot of an event-stream request (`takeStreamSlot`), set by the quota middleware. */
    streamSlot: { readonly release: () => void; taken: boolean } | undefined
    /** How long an admission waited for its turn (`admissionTurn`), in ms. */
    turnWaitMs: number | undefined
    /** When an admission's turn came (`performance.now()`): its admission is timed from there. */
    turnAt: number | undefined
  }
}
