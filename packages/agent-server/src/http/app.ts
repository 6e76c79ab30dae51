import { Hono } from 'hono'
import { InterludeError, SSE_HEADERS } from '@interlude/protocol'
import type { AgentDefinition } from '../agent/agent.ts'
import { resolveAgent } from '../agent/agent.ts'
import type { Authenticate } from '../auth/authenticate.ts'
import { admitRun } from '../core/admission.ts'
import { EventHub } from '../core/event-hub.ts'
import { LogWatcher } from '../core/log-watcher.ts'
import { RunRecovery } from '../core/recovery.ts'
import type { Limits } from '../core/limits.ts'
import { DEFAULT_LIMITS } from '../core/limits.ts'
import { parseRunInput } from '../core/parse-input.ts'
import { RunManager } from '../core/run-manager.ts'
import { logFrames } from '../core/run-stream.ts'
import { ValidatorCache } from '../schema/validator-cache.ts'
import type { Store } from '../store/store.ts'
import type { ServerEnv } from './env.ts'
import { auth } from './middleware/auth.ts'
import { errorHandler, notFoundHandler } from './middleware/error-handler.ts'
import { jsonBody } from './middleware/json-body.ts'
import { registerThreadRoutes } from './routes/threads.ts'
import { sseBody } from './sse-response.ts'

export interface AgentServerOptions {
  readonly agent: AgentDefinition
  readonly store: Store
  /** `authenticate(request) -> principal | null`; see `bearerTokens` and `anonymousSessionCookie`. */
  readonly authenticate: Authenticate
  /** Mount point of the routes. @default '/api/agent' */
  readonly basePath?: string
  /** The server clock in epoch ms (inject to test expiry). @default Date.now */
  readonly now?: () => number
  /** Lifetime of an interrupt batch. @default 3600 (1 hour) */
  readonly interruptTtlSeconds?: number
  readonly limits?: Partial<Limits>
  /**
   * This process is the only one using the store. At startup every run a previous process left
   * `running` is closed at once (`RUN_ERROR RUN_FAILED`). With `false` (several replicas on one
   * database) only runs whose lease ended are closed — at startup, by a periodic sweep and on first
   * touch of their thread. @default true for SQLite, false otherwise
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
  /** Where unexpected errors are reported (never to clients). @default console.error */
  readonly logError?: (message: string, error: unknown) => void
}

/** The Hono app plus the handles a host needs. */
export type AgentServer = Hono<ServerEnv> & {
  readonly runs: RunManager
  readonly store: Store
  readonly basePath: string
  /** Resolves once startup recovery has run. */
  ready(): Promise<void>
  /** Cancels active runs, waits for their terminal events, then closes the store. */
  close(): Promise<void>
}

function defaultLogError(message: string, error: unknown): void {
  console.error(`[interlude] ${message}:`, error)
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
  const now = options.now ?? Date.now
  const logError = options.logError ?? defaultLogError
  const limits: Limits = { ...DEFAULT_LIMITS, ...options.limits }
  const ttlSeconds = options.interruptTtlSeconds ?? 3600
  if (!(ttlSeconds > 0)) throw new RangeError('interruptTtlSeconds must be positive.')
  const validators = new ValidatorCache()
  const agent = resolveAgent(options.agent, validators)
  const { store } = options
  const hub = new EventHub()
  const runs = new RunManager({
    store,
    hub,
    agent,
    validators,
    now,
    interruptTtlMs: ttlSeconds * 1000,
    maxInterruptsPerBatch: limits.maxInterruptsPerBatch,
    logError,
    ...(options.runLeaseMs !== undefined ? { leaseMs: options.runLeaseMs } : {}),
  })
  const recovery = new RunRecovery({
    store,
    hub,
    agent,
    runs,
    exclusive: options.exclusive ?? store.kind === 'sqlite',
    logError,
  })
  const pollMs = options.pollMs ?? (store.watch ? 1000 : 250)
  const watcher = new LogWatcher({ store, hub, pollMs, logError })
  let unwatch: (() => void) | undefined

  let readyPromise: Promise<void> | undefined
  const ready = () => {
    readyPromise ??= (async () => {
      // Cross-process wake-ups: appended events wake live tails, cancel requests reach local runs.
      unwatch = store.watch?.((change) => {
        if (change.kind === 'events') hub.wake(change.threadId)
        else runs.cancel(change.threadId, change.runId)
      })
      watcher.start()
      await recovery.startup()
      recovery.startSweeping(Math.max(pollMs * 4, Math.floor(runs.leaseMs / 2)))
    })()
    return readyPromise
  }

  const app = new Hono<ServerEnv>()
  app.onError(errorHandler(logError))
  app.notFound(notFoundHandler)
  app.use('*', async (_c, next) => {
    await ready()
    await next()
  })

  app.get(`${basePath}/health`, async (c) => {
    try {
      await store.ping()
    } catch (error) {
      logError('health check: store unreachable', error)
      throw new InterludeError('STORE_UNAVAILABLE', 'The store is unreachable.')
    }
    return c.json({ status: 'ok', store: store.kind, activeRuns: runs.activeCount })
  })

  const authenticate = auth(options.authenticate)
  const sseOptions = { logError, ...(options.heartbeatMs !== undefined ? { heartbeatMs: options.heartbeatMs } : {}) }
  app.post(`${basePath}/runs`, authenticate, jsonBody(limits), async (c) => {
    const startedAt = performance.now()
    const input = parseRunInput(c.get('body'), limits)
    // Admission (including the atomic claim) completes before the streaming response exists.
    const deps = { store, agent, validators, now, limits, lease: () => runs.lease() }
    let admission
    try {
      admission = await admitRun(deps, c.get('principal'), input)
    } catch (error) {
      // First touch: a thread held by a run whose process died is released, then admission retried.
      if (!(InterludeError.isInstance(error) && error.code === 'THREAD_BUSY')) throw error
      const thread = await store.getThread(input.threadId)
      if (!thread || thread.ownerId !== c.get('principal') || (await recovery.touch(thread)) === thread) throw error
      admission = await admitRun(deps, c.get('principal'), input)
    }
    if (admission.kind === 'start') runs.start(admission.plan)
    // Admission time (validation, ownership, resume checks, claim), once the body was read.
    c.header('Server-Timing', `admission;dur=${(performance.now() - startedAt).toFixed(3)}`)
    const { threadId, runId } = input
    const body = sseBody(
      (signal) => logFrames(threadId, { store, hub, signal, runId, untilRunEnds: runId }),
      sseOptions,
    )
    return c.body(body, 200, SSE_HEADERS)
  })

  registerThreadRoutes(app, basePath, authenticate, {
    store,
    hub,
    runs,
    recovery,
    now,
    logError,
    heartbeatMs: options.heartbeatMs,
  })

  let closing: Promise<void> | undefined
  return Object.assign(app, {
    runs,
    store,
    basePath,
    ready,
    close: () => {
      closing ??= (async () => {
        watcher.stop()
        recovery.stop()
        unwatch?.()
        await runs.shutdown()
        await store.close()
      })()
      return closing
    },
  })
}
