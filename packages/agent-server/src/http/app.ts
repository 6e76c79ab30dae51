import { Hono } from 'hono'
import type { MiddlewareHandler } from 'hono'
import type { ExpiryPolicy } from '@interlude/protocol'
import type { AgentDefinition } from '../agent/agent.ts'
import { resolveAgent } from '../agent/agent.ts'
import type { CanDecide } from '../agent/decider.ts'
import type { Authenticate } from '../auth/authenticate.ts'
import type { Clock } from '../clock.ts'
import type { AdmissionDeps } from '../core/admission/admission.ts'
import { systemClock } from '../clock.ts'
import { DecisionRights } from '../core/access/decision-rights.ts'
import { OpenBatchCache } from '../core/open-batch-cache.ts'
import { AdmissionTurns } from '../core/runs/admission-turns.ts'
import type { AdmissionTurnsOptions } from '../core/runs/admission-turns.ts'
import { admissionTurn, isAdmissionRequest } from './middleware/admission-turn.ts'
import { EventHub } from '../core/log/event-hub.ts'
import { ExpirySweeper } from '../core/expiry/expiry-sweeper.ts'
import { expiryOptionProblem } from '../agent/expiry-options.ts'
import { LogWatcher } from '../core/log/log-watcher.ts'
import { RunRecovery } from '../core/runs/recovery.ts'
import type { Limits } from '../core/limits.ts'
import { DEFAULT_LIMITS } from '../core/limits.ts'
import { RunManager } from '../core/runs/run-manager.ts'
import { DEFAULT_SHUTDOWN_GRACE_MS, refuseWhileDraining, ShutdownState } from '../core/runs/shutdown.ts'
import { ValidatorCache } from '../schema/validator-cache.ts'
import type { Store, ThreadRecord } from '../store/store.ts'
import type { WebhookEndpoint } from '../webhooks/webhook-config.ts'
import { resolveWebhookEndpoints } from '../webhooks/webhook-config.ts'
import { WebhookOutbox } from '../webhooks/webhook-outbox.ts'
import { WebhookSender } from '../webhooks/webhook-sender.ts'
import type { WebhookSenderOptions } from '../webhooks/webhook-sender.ts'
import type { ServerEnv } from './env.ts'
import { auth } from './middleware/auth.ts'
import { errorHandler, notFoundHandler } from './middleware/error-handler.ts'
import { awaitReady } from './middleware/ready.ts'
import { closeOverUnreadBodies } from './middleware/unread-body.ts'
import { idParams } from './id-params.ts'
import { apiSecurityHeaders } from './middleware/static-files.ts'
import type { QuotaRefusal } from './middleware/quotas.ts'
import { quotaMiddleware, Quotas } from './middleware/quotas.ts'
import type { CorsOptions } from './middleware/cors.ts'
import { checkCorsOptions, corsMiddleware } from './middleware/cors.ts'
import { registerDecisionRoutes } from './routes/decisions.ts'
import { registerHealthRoute, storeWritable } from './routes/health.ts'
import type { ReadinessCheck } from './routes/health.ts'
import { registerMetricsRoute } from './routes/metrics.ts'
import { createLogger, logErrorTo } from '../observability/logger.ts'
import type { Logger } from '../observability/logger.ts'
import { ServerMetrics } from '../observability/metrics.ts'
import { requestLog } from './middleware/request-log.ts'
import { logRunEvents } from '../observability/run-log.ts'
import { withTypedErrors } from '../store/store-errors.ts'
import { registerEffectRoutes } from './routes/effects.ts'
import { registerInterruptRoutes } from './routes/interrupts.ts'
import { registerPermissionRuleRoutes } from './routes/permission-rules.ts'
import { registerRunRoutes } from './routes/runs.ts'
import { registerThreadRoutes } from './routes/threads.ts'
import type { SseBodyOptions } from './sse-response.ts'
import { checkUsageOptions } from '../core/turn/usage.ts'
import type { UsageOptions } from '../core/turn/usage.ts'

export interface AgentServerOptions {
  readonly agent: AgentDefinition
  readonly store: Store
  /** `authenticate(request) -> principal | null`; see `bearerTokens` and `anonymousSessionCookie`. */
  readonly authenticate: Authenticate
  /** Mount point of the routes. @default '/api/agent' */
  readonly basePath?: string
  /** The server clock in epoch ms: interrupt expiry, run leases, recovery, timestamps (inject to test them). @default systemClock */
  readonly now?: Clock
  /** Lifetime of an interrupt batch. @default 3600 (1 hour) */
  readonly interruptTtlSeconds?: number
  /**
   * What happens to a batch when its deadline passes, for tools that set no `onExpiry` (docs/approvals.md#deadlines).
   * @default 'deny' for tool approvals, 'cancel' for `askUser`
   */
  readonly onExpiry?: ExpiryPolicy
  /**
   * Interval of the expiry sweep of due batches; `0`: only on first touch and `expirySweeper.sweepOnce()`.
   * @default 1000
   */
  readonly expirySweepMs?: number
  readonly limits?: Partial<Limits>
  /**
   * This process is the only one using the store. At startup every run a previous process left
   * `running` is taken over and continued (docs/architecture.md, "Durable continuation"). With `false` (several
   * replicas on one database) only runs whose lease ended are taken over — at startup, by a periodic sweep and on
   * first touch of their thread. @default true for SQLite, false otherwise
   */
  readonly exclusive?: boolean
  /** Lease of a running run, renewed by its process; after it the run counts as abandoned. @default 15000 */
  readonly runLeaseMs?: number
  /**
   * Interval of the log poll that wakes live tails of runs executing in other processes (and of
   * the recovery sweep, ×4). @default 250 without a store change feed, 1000 with one (PostgreSQL)
   */
  readonly pollMs?: number
  /** Silence on an SSE stream before a `: ping` comment is sent. @default 15000 */
  readonly heartbeatMs?: number
  /** Where unexpected errors are reported (never to clients). @default an `error` line of `logger` */
  readonly logError?: (message: string, error: unknown) => void
  /**
   * Structured JSON logs, one line per event (README, "Logs and metrics"). @default `createLogger()`: stdout at
   * `INTERLUDE_LOG_LEVEL`, else `info` (`silent` under vitest)
   */
  readonly logger?: Logger
  /**
   * Principals who may read `GET {base}/metrics` (Prometheus text; besides the `approvers`). Without any, the route
   * answers `404 NOT_FOUND` to everybody; `startServer({ metricsPort })` serves the same text on a port of its own.
   * @default []
   */
  readonly metricsPrincipals?: readonly string[]
  /** Also export Node process metrics (CPU, memory, event loop, GC). @default false */
  readonly processMetrics?: boolean
  /** Conditions `GET {base}/health?ready` checks besides the store taking writes (e.g. "not shutting down"). */
  readonly readiness?: readonly ReadinessCheck[]
  /**
   * Who may decide an interrupt (docs/approvals.md); a tool's `approvers` narrows it further.
   * @default the thread's owner, or a principal named in `approvers`
   */
  readonly canDecide?: CanDecide
  /** Principals who may decide every batch on the server (read by the default `canDecide` only). @default [] */
  readonly approvers?: readonly string[]
  /**
   * Endpoints that receive `interrupt.opened`, `interrupt.decided`, `interrupt.expired` and `run.failed`, signed per
   * the Standard Webhooks spec, at least once, from a durable outbox (docs/approvals.md, "Webhooks"). Checked here:
   * a bad URL or secret throws a `RangeError`. @default []
   */
  readonly webhooks?: readonly WebhookEndpoint[]
  /** Tuning of the webhook sender (poll, lock, concurrency, timeout, retries); the defaults suit most hosts. */
  readonly webhookDelivery?: WebhookDeliveryOptions
  /** Cross-origin access for browser apps on other origins (preflights, allowed headers). @default none: same origin only */
  readonly cors?: CorsOptions
  /**
   * Graceful shutdown (`shutdown()`, SIGTERM/SIGINT in the CLI): how long running turns may take to finish before
   * their leases are released for the restart or another replica (docs/architecture.md, "Shutdown"). @default 10000
   */
  readonly shutdownGraceMs?: number
  /**
   * Admission turns under a burst (docs/architecture.md, "Admission under a burst"); `false`: every admission runs
   * as soon as its request is read, as before turns existed.
   */
  readonly admissionTurns?: AdmissionTurnsOptions | false
  /** Called on every quota refusal (`RATE_LIMITED`, `SERVER_BUSY`): the hook a refusal counter plugs into. */
  readonly onQuotaRefused?: (refusal: QuotaRefusal) => void
  /** Token caps per thread / per principal and the `onUsage` hook (docs/protocol.md#token-usage). @default no caps */
  readonly usage?: UsageOptions
}

/** The sender settings a host may change (see `WebhookSenderOptions` for each default). */
export type WebhookDeliveryOptions = Partial<
  Pick<
    WebhookSenderOptions,
    'pollMs' | 'lockMs' | 'concurrency' | 'timeoutMs' | 'maxAttempts' | 'retryBaseMs' | 'retryMaxMs' | 'stopTimeoutMs'
  >
>

/** The Hono app plus the handles a host needs. */
export type AgentServer = Hono<ServerEnv> & {
  readonly runs: RunManager
  readonly store: Store
  readonly basePath: string
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
  const basePath = (options.basePath ?? '/api/agent').replace(/\/+$/, '')
  const now = options.now ?? systemClock
  const logger = options.logger ?? createLogger()
  const logError = options.logError ?? logErrorTo(logger)
  const limits: Limits = { ...DEFAULT_LIMITS, ...options.limits }
  const ttlSeconds = options.interruptTtlSeconds ?? 3600
  if (!(ttlSeconds > 0)) throw new RangeError('interruptTtlSeconds must be positive.')
  if (options.cors) checkCorsOptions(options.cors)
  checkUsageOptions(options.usage, options.store)
  const expiryProblem = expiryOptionProblem(options.onExpiry)
  if (expiryProblem !== undefined) throw new RangeError(expiryProblem)
  const validators = new ValidatorCache()
  const agent = resolveAgent(options.agent, validators)
  // Store failures typed in one place (issue 12): 503 STORE_UNAVAILABLE, RUN_ERROR STORE_UNAVAILABLE, 400 for values
  // the database refuses.
  const store = withTypedErrors(options.store)
  const endpoints = resolveWebhookEndpoints(options.webhooks ?? [])
  // The server clock: outbox rows are stamped with it, so their due times and locks are read with it too.
  // Built even without endpoints, so bad `webhookDelivery` settings are refused here; it runs only with endpoints.
  const built = new WebhookSender({ ...options.webhookDelivery, store, endpoints, logError, now, log: logger })
  const sender = endpoints.length > 0 ? built : undefined
  const webhooks = new WebhookOutbox(endpoints, () => sender?.wake())
  const rights = new DecisionRights({
    store,
    tools: agent.tools,
    logError,
    ...(options.canDecide !== undefined ? { canDecide: options.canDecide } : {}),
    ...(options.approvers !== undefined ? { approvers: options.approvers } : {}),
  })
  const hub = new EventHub()
  let activeRuns = (): number => 0
  const metrics = new ServerMetrics({ activeRuns: () => activeRuns(), processMetrics: options.processMetrics ?? false })
  // Runs and interrupts are counted and logged from the events this process commits.
  hub.tap((threadId, events) => {
    metrics.observeEvents(events)
    logRunEvents(logger, threadId, events)
  })
  // The open batches this process wrote or read: their resumes are admitted with the claim alone.
  const openBatches = new OpenBatchCache()
  // Under a burst, admissions take turns with the database's answers; admitted runs start after them.
  const turns = options.admissionTurns === false ? undefined : new AdmissionTurns(options.admissionTurns)
  const runs = new RunManager({
    store,
    hub,
    openBatches,
    ...(turns ? { turns } : {}),
    agent,
    validators,
    now,
    interruptTtlMs: ttlSeconds * 1000,
    onExpiry: options.onExpiry,
    maxInterruptsPerBatch: limits.maxInterruptsPerBatch,
    logError,
    webhooks,
    history: limits,
    ...(options.runLeaseMs !== undefined ? { leaseMs: options.runLeaseMs } : {}),
    // Every model call's usage: a structured log line and the token counter, then the host's own hook.
    usage: {
      ...options.usage,
      onUsage: (report) => {
        logger.info(
          {
            event: 'model.usage',
            threadId: report.threadId,
            runId: report.runId,
            model: report.model,
            inputTokens: report.usage.inputTokens,
            outputTokens: report.usage.outputTokens,
          },
          'model call usage',
        )
        metrics.recordModelUsage(report.usage)
        options.usage?.onUsage?.(report)
      },
    },
    maxToolArgumentBytes: limits.maxToolArgumentBytes,
  })
  activeRuns = () => runs.activeCount
  const recovery = new RunRecovery({
    store,
    hub,
    agent,
    runs,
    exclusive: options.exclusive ?? store.kind === 'sqlite',
    now,
    logError,
    webhooks,
    log: logger,
  })
  const expirySweeper = new ExpirySweeper({
    store,
    runs,
    validators,
    now,
    logError,
    webhooks,
    log: logger,
    ...(options.expirySweepMs !== undefined ? { sweepMs: options.expirySweepMs } : {}),
  })
  const pollMs = options.pollMs ?? (store.watch ? 1000 : 250)
  const watcher = new LogWatcher({ store, hub, pollMs, logError })
  let unwatch: (() => void) | undefined

  let readyPromise: Promise<void> | undefined
  const ready = () => {
    readyPromise ??= (async () => {
      // Cross-process wake-ups: appended events wake live tails, cancel requests reach local runs.
      unwatch = store.watch?.((change) => {
        if (change.kind === 'events') hub.wake(change.threadId, change.seq)
        else runs.cancel(change.threadId, change.runId)
      })
      watcher.start()
      await recovery.startup()
      // After startup recovery, whose `run.failed` rows it then sends with everything the outbox still holds.
      sender?.start()
      // Often enough that a run whose lease ended (or was released by a graceful shutdown) is continued soon.
      recovery.startSweeping(Math.max(50, Math.min(pollMs * 4, Math.floor(runs.leaseMs / 2))))
      expirySweeper.start()
    })()
    return readyPromise
  }

  const app = new Hono<ServerEnv>()
  app.onError(errorHandler(logError))
  app.notFound(notFoundHandler)
  app.use('*', requestLog(logger, metrics))
  // Run and decision admissions take turns under a burst (core/runs/admission-turns.ts), before anything else of theirs.
  if (turns) app.use('*', admissionTurn(turns, isAdmissionRequest(basePath)))
  // An answer given over a large body nobody read (401, 429, 404, ...) closes the connection instead of reading it.
  app.use('*', closeOverUnreadBodies)
  // X-Content-Type-Options: nosniff on every answer (static answers get more, see static-files.ts).
  app.use('*', apiSecurityHeaders)
  // Preflights are answered before the ready gate and authentication (a browser sends no credentials with them).
  if (options.cors) app.use(`${basePath}/*`, corsMiddleware(options.cors))
  const draining = new ShutdownState()
  app.use('*', refuseWhileDraining(draining))
  app.use('*', awaitReady(ready))
  // Ids in paths are checked once, here, before authentication, routes and stores (issue 12).
  app.use(`${basePath}/threads/*`, idParams(basePath))

  const readiness: ReadinessCheck[] = [storeWritable(store, logError), ...(options.readiness ?? [])]
  registerHealthRoute(app, basePath, { store, readiness, logError })
  // Authentication, then the principal's quotas (README "Quotas and limits"), as one middleware for every route.
  const quotas = new Quotas({
    limits,
    store,
    onQuotaRefused: (refusal) => {
      metrics.recordQuotaRefusal(refusal.quota)
      options.onQuotaRefused?.(refusal)
    },
  })
  const authenticated = auth(options.authenticate)
  const limited = quotaMiddleware(quotas, basePath)
  const authenticate: MiddlewareHandler<ServerEnv> = (c, next) =>
    authenticated(c, async () => {
      await limited(c, next)
    })
  const sse: SseBodyOptions = {
    logError,
    openStreams: metrics.openStreams,
    ...(options.heartbeatMs !== undefined ? { heartbeatMs: options.heartbeatMs } : {}),
  }
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
    expireBatch: (batch) => expirySweeper.expire(batch),
    quota: quotas,
    openBatches,
  }
  registerRunRoutes(app, basePath, authenticate, {
    admission,
    runs,
    hub,
    limits,
    sse,
    turns,
    closing: draining.streamsEnd,
  })
  const closing = new AbortController()
  registerThreadRoutes(app, basePath, authenticate, {
    store,
    hub,
    runs,
    recovery,
    rights,
    now,
    sse,
    closing: closing.signal,
    snapshotPageBytes: limits.snapshotPageBytes,
  })
  registerDecisionRoutes(app, basePath, authenticate, {
    admission,
    access: { store, rights, recovery },
    runs,
    limits,
    turns,
  })
  registerInterruptRoutes(app, basePath, authenticate, { store, rights, now })
  registerPermissionRuleRoutes(app, basePath, authenticate, { store, now })
  registerMetricsRoute(app, basePath, authenticate, {
    metrics,
    principals: [...(options.metricsPrincipals ?? []), ...(options.approvers ?? [])],
  })
  registerEffectRoutes(app, basePath, authenticate, { access: { store, rights, recovery }, store, now, limits })

  let closingDone: Promise<void> | undefined
  let handedOver = 0
  const shutdown = async (graceMs: number): Promise<number> => {
    closingDone ??= (async () => {
      draining.begin()
      // No takeovers of other replicas' runs and no new decisions while this process drains.
      recovery.stop()
      await expirySweeper.stop()
      // Runs held for a burst's admissions start now: the grace period counts from here, not from maxRunDelayMs.
      turns?.release()
      handedOver = await runs.drain(graceMs)
      // The turns left are continued elsewhere: their clients reconnect with Last-Event-ID.
      draining.endStreams()
      closing.abort()
      watcher.stop()
      unwatch?.()
      await sender?.stop()
      await store.close()
    })()
    await closingDone
    return handedOver
  }
  return Object.assign(app, {
    runs,
    store,
    basePath,
    expirySweeper,
    logger,
    metrics,
    ready,
    shutdown: (graceMs?: number) => shutdown(graceMs ?? options.shutdownGraceMs ?? DEFAULT_SHUTDOWN_GRACE_MS),
    isShuttingDown: () => draining.draining,
    admissionTurns: turns,
    close: () => {
      closingDone ??= (async () => {
        closing.abort()
        watcher.stop()
        recovery.stop()
        await expirySweeper.stop()
        unwatch?.()
        // Held runs start (and are cancelled with the rest) instead of waiting out maxRunDelayMs.
        turns?.release()
        await runs.shutdown()
        // Before the store closes: in-flight deliveries finish (or stay locked, to be sent again after a restart).
        await sender?.stop()
        await store.close()
      })()
      return closingDone
    },
  })
}
