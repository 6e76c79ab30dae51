import { Hono } from 'hono'
import type { MiddlewareHandler } from 'hono'
import type { AgentDefinition } from '../agent/agent.ts'
import { resolveAgent } from '../agent/agent.ts'
import type { Authenticate } from '../auth/authenticate.ts'
import type { ServerConfig } from '../config/server-config.ts'
import { resolveServerConfig } from '../config/server-config.ts'
import type { ServerOptions } from '../config/server-options.ts'
import type { AdmissionDeps } from '../core/admission/admission.ts'
import type { ExpirySweeper } from '../core/expiry/expiry-sweeper.ts'
import type { RunManager } from '../core/runs/run-manager.ts'
import { refuseWhileDraining } from '../core/runs/shutdown.ts'
import type { Logger } from '../observability/logger.ts'
import type { ServerMetrics } from '../observability/metrics.ts'
import { requestLog } from './middleware/request-log.ts'
import { ValidatorCache } from '../schema/validator-cache.ts'
import type { Store, ThreadRecord } from '../store/store.ts'
import { withTypedErrors } from '../store/store-errors.ts'
import type { ServerEnv } from './env.ts'
import { idParams } from './id-params.ts'
import { admissionTurn, isAdmissionRequest } from './middleware/admission-turn.ts'
import { auth } from './middleware/auth.ts'
import { corsMiddleware } from './middleware/cors.ts'
import { errorHandler, notFoundHandler } from './middleware/error-handler.ts'
import { quotaMiddleware, Quotas } from './middleware/quotas.ts'
import { AddressGuard } from './middleware/address-guard.ts'
import { awaitReady } from './middleware/ready.ts'
import { apiSecurityHeaders } from './middleware/static-files.ts'
import { closeOverUnreadBodies } from './middleware/unread-body.ts'
import { registerDecisionRoutes } from './routes/decisions.ts'
import { registerOutsideRoutes } from './routes/outside.ts'
import { registerEffectRoutes } from './routes/effects.ts'
import { registerToolClaimRoutes } from './routes/tool-claims.ts'
import { registerHealthRoute, storeWritable } from './routes/health.ts'
import type { ReadinessCheck } from './routes/health.ts'
import { registerInterruptRoutes } from './routes/interrupts.ts'
import { registerMetricsRoute } from './routes/metrics.ts'
import { registerPermissionRuleRoutes } from './routes/permission-rules.ts'
import { registerRunRoutes } from './routes/runs.ts'
import { registerThreadRoutes } from './routes/threads.ts'
import { registerForkRoutes } from './routes/forks.ts'
import type { ServerParts } from './server-parts.ts'
import { createServerParts } from './server-parts.ts'
import type { StopMode } from './server-lifecycle.ts'
import { startInOrder, stopInOrder } from './server-lifecycle.ts'
import type { SseBodyOptions } from './sse-body.ts'
import { RunQueue } from '../core/queue/run-queue.ts'

export type { WebhookDeliveryOptions } from '../webhooks/webhook-sender.ts'

/** The settings (`ServerOptions`, each with its default) plus what the server is made of. */
export interface AgentServerOptions extends ServerOptions {
  readonly agent: AgentDefinition
  readonly store: Store
  /** `authenticate(request) -> principal | null`; see `bearerTokens` and `anonymousSessionCookie`. */
  readonly authenticate: Authenticate
  /** Conditions `GET {base}/health?ready` checks besides the store taking writes (e.g. "not shutting down"). */
  readonly readiness?: readonly ReadinessCheck[] | undefined
}

/** The Hono app plus the handles a host needs. */
export type AgentServer = Hono<ServerEnv> & {
  readonly runs: RunManager
  readonly store: Store
  readonly basePath: string
  /** The resolved settings (`resolveServerConfig`): every default applied. */
  readonly config: ServerConfig
  /** The sweep that decides expired batches (`sweepOnce()` runs one round now). */
  readonly expirySweeper: ExpirySweeper
  /** Structured logger (README, "Logs and metrics"). */
  readonly logger: Logger
  /** Prometheus metrics; other parts increment them here (e.g. `metrics.recordQuotaRefusal(reason)`). */
  readonly metrics: ServerMetrics
  /** Resolves once startup recovery has run. */
  ready(): Promise<void>
  /** Cancels active runs, waits for their terminal events, then closes the store. */
  close(): Promise<void>
  /**
   * Graceful shutdown (docs/architecture.md, "Shutdown"): refuses new requests (`503 SERVER_SHUTTING_DOWN`), lets
   * running turns finish for `graceMs`, releases the leases of the rest (never cancels them), ends open streams
   * without a failure event, then closes the store. Answers how many turns were handed over.
   */
  shutdown(graceMs?: number): Promise<number>
  /** True once `shutdown()` began: readiness answers 503. */
  isShuttingDown(): boolean
  /** Admission turns now: requests waiting for one, admissions deciding (`undefined` with `admissionTurns: false`). */
  readonly admissionTurns: { readonly waiting: number; readonly admitting: number } | undefined
}

/**
 * The AG-UI 1.0 endpoint (docs/protocol.md): `POST {base}/runs` answers admission errors as JSON and
 * admitted runs as SSE; thread snapshot, event replay, cancel and inbox routes; `GET {base}/health`
 * reports liveness and store reachability.
 * @example
 * const app = createAgentServer({ agent: releaseAssistant(), store: createSqliteStore('data.db'), authenticate: bearerTokens({ alice: 'secret' }) })
 * serve({ fetch: app.fetch, port: 8787 })
 */
export function createAgentServer(options: AgentServerOptions): AgentServer {
  // Store failures typed in one place (docs/decisions.md#operating-it): 503 STORE_UNAVAILABLE, RUN_ERROR
  // STORE_UNAVAILABLE, 400 for values the database refuses.
  const store = withTypedErrors(options.store)
  const config = resolveServerConfig(options, store)
  const validators = new ValidatorCache()
  const parts = createServerParts(config, resolveAgent(options.agent, validators), store, validators)
  const { basePath, logger, shutdownGraceMs } = config
  const { runs, expirySweeper, metrics, draining, turns } = parts

  let started: Promise<void> | undefined
  const ready = () => (started ??= startInOrder(parts))
  const app = new Hono<ServerEnv>()
  app.onError(errorHandler(config.logError))
  app.notFound(notFoundHandler)
  app.use('*', requestLog(logger, metrics))
  // Run and decision admissions take turns under a burst (core/runs/admission-turns.ts), before anything else of theirs.
  if (turns) app.use('*', admissionTurn(turns, isAdmissionRequest(basePath)))
  // An answer given over a large body nobody read (401, 429, 404, ...) closes the connection instead of reading it.
  app.use('*', closeOverUnreadBodies)
  // X-Content-Type-Options: nosniff on every answer (static answers get more, see static-files.ts).
  app.use('*', apiSecurityHeaders)
  // Preflights are answered before the ready gate and authentication (a browser sends no credentials with them).
  if (config.cors) app.use(`${basePath}/*`, corsMiddleware(config.cors))
  app.use('*', refuseWhileDraining(draining))
  app.use('*', awaitReady(ready))
  // Ids in paths are checked once, here, before authentication, routes and stores (docs/decisions.md#operating-it).
  app.use(`${basePath}/threads/*`, idParams(basePath))
  registerRoutes(app, parts, options)

  let stopped: Promise<number> | undefined
  const stop = (mode: StopMode) => (stopped ??= stopInOrder(parts, mode))
  return Object.assign(app, {
    runs,
    store,
    basePath,
    config,
    expirySweeper,
    logger,
    metrics,
    ready,
    shutdown: (graceMs?: number) => stop({ graceful: true, graceMs: graceMs ?? shutdownGraceMs }),
    isShuttingDown: () => draining.draining,
    admissionTurns: turns,
    close: async () => {
      await stop({ graceful: false })
    },
  })
}

/** The health route, then every authenticated route (docs/protocol.md#http-binding). */
function registerRoutes(
  app: Hono<ServerEnv>,
  parts: ServerParts,
  options: Pick<AgentServerOptions, 'authenticate' | 'readiness'>,
): void {
  const { config, store, agent, validators, hub, metrics, rights, webhooks, runs, recovery, turns } = parts
  const { basePath, now, limits, logError } = config
  const readiness: ReadinessCheck[] = [storeWritable(store, logError), ...(options.readiness ?? [])]
  registerHealthRoute(app, basePath, { store, readiness, logError })
  // Authentication, then the principal's quotas (README "Quotas and limits"), as one middleware for every route.
  const quotas = new Quotas({
    limits,
    store,
    onQuotaRefused: (refusal) => {
      metrics.recordQuotaRefusal(refusal.quota)
      config.onQuotaRefused?.(refusal)
    },
  })
  const guard = new AddressGuard(limits, (refusal) => {
    metrics.recordQuotaRefusal(refusal.quota)
    config.onQuotaRefused?.(refusal)
  })
  const authenticated = auth(options.authenticate, guard)
  const limited = quotaMiddleware(quotas, basePath)
  const authenticate: MiddlewareHandler<ServerEnv> = (c, next) =>
    authenticated(c, async () => {
      await limited(c, next)
    })
  const sse: SseBodyOptions = { ...config, openStreams: metrics.openStreams }
  const admission: AdmissionDeps = {
    store,
    agent,
    validators,
    now,
    limits,
    lease: () => runs.lease(),
    recoverThread: (thread: ThreadRecord) => recovery.touch(thread),
    rights,
    webhooks,
    expireBatch: (batch) => parts.expirySweeper.expire(batch),
    quota: quotas,
    openBatches: parts.openBatches,
    publish: (threadId, events) => hub.publish(threadId, events),
  }
  const access = { store, rights, recovery }
  // Queued input (docs/protocol.md#multitask) starts when a run of this process ends, and from the recovery sweep.
  const queue = new RunQueue({ store, runs, admission, logError })
  runs.onRunEnded((threadId) => void queue.kick(threadId))
  recovery.afterSweep(() => queue.sweep())
  registerRunRoutes(app, basePath, authenticate, {
    queue,
    multitask: config.multitask,
    admission,
    runs,
    hub,
    limits,
    sse,
    turns,
    closing: parts.draining.streamsEnd,
  })
  registerThreadRoutes(app, basePath, authenticate, {
    ...access,
    hub,
    runs,
    now,
    sse,
    closing: parts.closing.signal,
    snapshotPageBytes: limits.snapshotPageBytes,
    resultFrom: (toolName) => admission.agent.tools.get(toolName)?.definition.resultFrom,
  })
  registerDecisionRoutes(app, basePath, authenticate, { admission, access, runs, limits, turns })
  registerOutsideRoutes(app, basePath, config, {
    admission,
    start: (plan) => runs.start(plan),
    admit: turns ? (admit) => turns.admit(admit) : undefined,
  })
  registerInterruptRoutes(app, basePath, authenticate, {
    store,
    rights,
    now,
    charge: (key, points) => quotas.charge(key, points),
  })
  registerPermissionRuleRoutes(app, basePath, authenticate, { store, rights, now })
  registerMetricsRoute(app, basePath, authenticate, {
    metrics,
    principals: [...config.metricsPrincipals, ...config.approvers],
  })
  registerForkRoutes(app, basePath, authenticate, {
    access,
    store,
    now,
    limits,
    initialState: () => agent.initialState(),
    newThread: (owner) => quotas.newThread(owner),
  })
  registerEffectRoutes(app, basePath, authenticate, { access, store, now, limits })
  registerToolClaimRoutes(app, basePath, authenticate, { access, store, now, limits })
}
