import type { AdmissionTurnsOptions } from './core/runs/admission-turns.ts'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import type { ExpiryPolicy } from '@interlude/protocol'
import type { Server } from 'node:http'
import { serve } from '@hono/node-server'
import type { AgentDefinition } from './agent/agent.ts'
import type { CanDecide } from './agent/decider.ts'
import type { Authenticate } from './auth/authenticate.ts'
import { anonymousSessionCookie, bearerTokens, weakTokenNames } from './auth/authenticate.ts'
import { resolveSessionSecret } from './auth/session-secret.ts'
import type { Clock } from './clock.ts'
import type { Limits } from './core/limits.ts'
import { DEFAULT_LIMITS } from './core/limits.ts'
import { capConnections, checkConnectionLimits, serverTimeoutOptions } from './http/connection-limits.ts'
import { staticFiles } from './http/middleware/static-files.ts'
import type { QuotaRefusal } from './http/middleware/quotas.ts'
import { releaseAssistant } from './demo/release-assistant.ts'
import type { AgentServer, WebhookDeliveryOptions } from './http/app.ts'
import { createAgentServer } from './http/app.ts'
import type { OpenAIModelOptions } from './models/openai.ts'
import { openaiModel } from './models/openai.ts'
import { createPostgresStore } from './store/postgres/postgres-store.ts'
import { createSqliteStore } from './store/sqlite/sqlite-store.ts'
import type { Store } from './store/store.ts'
import type { WebhookEndpoint } from './webhooks/webhook-config.ts'
import type { CorsOptions } from './http/middleware/cors.ts'
import { createLogger } from './observability/logger.ts'
import type { Logger, LogLevel } from './observability/logger.ts'
import { acquireSqliteLock } from './store/sqlite/process-lock.ts'
import type { ProcessLock } from './store/sqlite/process-lock.ts'
import type { UsageOptions } from './core/turn/usage.ts'

export interface StartServerOptions {
  /** @default 0 (an ephemeral port) */
  readonly port?: number
  /** @default '127.0.0.1' */
  readonly host?: string
  /** SQLite file (created on first start). One of `dbPath` / `dbUrl` is required. */
  readonly dbPath?: string
  /** `postgres://…` URL: the PostgreSQL store (schema and tables created on first start). */
  readonly dbUrl?: string
  /** PostgreSQL schema of the tables. @default the connection's search_path (usually `public`) */
  readonly dbSchema?: string
  /** PostgreSQL pool sizes (`PostgresStoreOptions.max`, `.admissionMax`). @default 20 and 10 */
  readonly dbPool?: { readonly max?: number; readonly admissionMax?: number }
  /** @default 'scripted' */
  readonly model?: 'scripted' | 'openai'
  /** Options of the OpenAI provider (defaults come from OPENAI_* environment variables). */
  readonly openai?: OpenAIModelOptions
  /** A custom agent instead of the release assistant. */
  readonly agent?: AgentDefinition
  /** @default 3600 */
  readonly interruptTtlSeconds?: number
  /** See `AgentServerOptions.onExpiry`. @default by kind: 'deny' for approvals, 'cancel' for `askUser` */
  readonly onExpiry?: ExpiryPolicy
  /** See `AgentServerOptions.expirySweepMs`. @default 1000 */
  readonly expirySweepMs?: number
  /** See `AgentServerOptions.now`. @default systemClock */
  readonly now?: Clock
  /** Bearer tokens by principal name; without them, signed anonymous-session cookies are used. */
  readonly tokens?: Readonly<Record<string, string>>
  /**
   * Secret of the anonymous-session cookies (README "Sessions and secrets"). @default `INTERLUDE_SESSION_SECRET`,
   * else (SQLite) a random secret kept in `<db>.session-secret` (mode 0600); PostgreSQL requires the variable
   */
  readonly sessionSecret?: string
  /** Server-side lifetime of an anonymous session from its issue time. @default 30 days */
  readonly sessionMaxAgeSeconds?: number
  /** `Secure` + `__Host-` session cookies: always, never, or when the request is HTTPS. @default 'auto' */
  readonly secureCookies?: boolean | 'auto'
  /** Believe `X-Forwarded-Proto` from a TLS-terminating proxy (for `secureCookies: 'auto'`). @default false */
  readonly trustProxy?: boolean
  /** Startup warnings (weak tokens, a public bind without tokens, a loosened secret file). @default stderr */
  readonly warn?: (message: string) => void
  /** See `AgentServerOptions.onQuotaRefused`. */
  readonly onQuotaRefused?: (refusal: QuotaRefusal) => void
  /** Scripted-model token pacing in ms. @default 0 */
  readonly pacingMs?: number
  /** @default '/api/agent' */
  readonly basePath?: string
  /** Serve this directory (the built workbench) at `/`. */
  readonly staticDir?: string
  readonly limits?: Partial<Limits>
  /** Silence on an SSE stream before a `: ping` comment. @default 15000 */
  readonly heartbeatMs?: number
  /** See `AgentServerOptions.exclusive`. @default true for SQLite, false for PostgreSQL */
  readonly exclusive?: boolean
  /** See `AgentServerOptions.runLeaseMs`. @default 15000 */
  readonly runLeaseMs?: number
  /** See `AgentServerOptions.pollMs`. */
  readonly pollMs?: number
  readonly logError?: (message: string, error: unknown) => void
  /** See `AgentServerOptions.canDecide`. */
  readonly canDecide?: CanDecide
  /** See `AgentServerOptions.approvers`. */
  readonly approvers?: readonly string[]
  /** See `AgentServerOptions.webhooks`. */
  readonly webhooks?: readonly WebhookEndpoint[]
  /** See `AgentServerOptions.cors`. */
  readonly cors?: CorsOptions
  /** See `AgentServerOptions.webhookDelivery`. */
  readonly webhookDelivery?: WebhookDeliveryOptions
  /** See `AgentServerOptions.logger`. */
  readonly logger?: Logger
  /** Level of the default logger (ignored with `logger`). @default `INTERLUDE_LOG_LEVEL`, else info (silent under vitest) */
  readonly logLevel?: LogLevel
  /** See `AgentServerOptions.metricsPrincipals`. */
  readonly metricsPrincipals?: readonly string[]
  /** Serve `GET /metrics` (Prometheus text, no authentication) on this port of `metricsHost`; 0: any free port. */
  readonly metricsPort?: number
  /** @default '127.0.0.1' */
  readonly metricsHost?: string
  /** See `AgentServerOptions.shutdownGraceMs`. @default 10000 */
  readonly shutdownGraceMs?: number
  /** See `AgentServerOptions.admissionTurns`. @default on, with its defaults */
  readonly admissionTurns?: AdmissionTurnsOptions | false
  /** See `AgentServerOptions.usage`. */
  readonly usage?: UsageOptions
}

export interface RunningServer {
  /** `http://HOST:PORT` */
  readonly url: string
  /** `url + basePath`, e.g. `http://127.0.0.1:PORT/api/agent` */
  readonly baseUrl: string
  readonly port: number
  readonly app: AgentServer
  readonly store: Store
  /** `http://HOST:PORT/metrics` when `metricsPort` was given. */
  readonly metricsUrl?: string
  /** Stops accepting connections, finishes active runs (as cancelled) and closes the store. */
  close(): Promise<void>
  /**
   * Graceful shutdown (SIGTERM/SIGINT in the CLI; docs/architecture.md, "Shutdown"): new requests get `503
   * SERVER_SHUTTING_DOWN` while running turns finish for `graceMs` (default `shutdownGraceMs`); the rest are handed
   * over (leases released, not cancelled); then the listener and the store close. Answers how many were handed over.
   */
  shutdown(graceMs?: number): Promise<number>
}

function defaultWarn(message: string): void {
  process.stderr.write(`interlude-server: warning: ${message}\n`)
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host)
}

/**
 * Bearer tokens (refused when a secret has whitespace or two principals share one; warned when short), else signed
 * anonymous sessions whose secret is never a database row (README "Sessions and secrets").
 */
function authenticatorFor(options: StartServerOptions, store: Store, warn: (message: string) => void): Authenticate {
  const host = options.host ?? '127.0.0.1'
  if (options.tokens && Object.keys(options.tokens).length > 0) {
    const authenticate = bearerTokens(options.tokens)
    const weak = weakTokenNames(options.tokens)
    if (weak.length > 0) warn(`the token of ${weak.join(', ')} has fewer than 16 characters: easy to guess.`)
    return authenticate
  }
  if (!isLoopback(host))
    warn(`listening on ${host} without tokens: anyone who reaches it gets an anonymous session (use --tokens-file).`)
  const secret = resolveSessionSecret({
    explicit: options.sessionSecret,
    env: process.env,
    sqlitePath: store.kind === 'sqlite' ? (options.dbPath ?? ':memory:') : undefined,
    warn,
  })
  return anonymousSessionCookie({
    secret,
    ...(options.sessionMaxAgeSeconds !== undefined ? { maxAgeSeconds: options.sessionMaxAgeSeconds } : {}),
    ...(options.secureCookies !== undefined ? { secure: options.secureCookies } : {}),
    ...(options.trustProxy !== undefined ? { trustProxy: options.trustProxy } : {}),
  })
}

/** `postgres://` / `postgresql://` URLs select the PostgreSQL store. */
export function isPostgresUrl(value: string): boolean {
  return /^postgres(ql)?:\/\//i.test(value)
}

/** The SQLite file's process lock (`process-lock.ts`): exclusive unless the server shares the file. */
function lockFor(options: StartServerOptions): ProcessLock | undefined {
  const file = options.dbPath
  if (options.dbUrl !== undefined || file === undefined || file === ':memory:' || isPostgresUrl(file)) return undefined
  return acquireSqliteLock(file, options.exclusive === false ? 'shared' : 'exclusive')
}

async function openStore(options: StartServerOptions): Promise<Store> {
  const url =
    options.dbUrl ?? (options.dbPath !== undefined && isPostgresUrl(options.dbPath) ? options.dbPath : undefined)
  if (url !== undefined) {
    if (!isPostgresUrl(url)) throw new RangeError('dbUrl must be a postgres:// URL.')
    return createPostgresStore({
      connectionString: url,
      ...(options.dbSchema !== undefined ? { schema: options.dbSchema } : {}),
      ...(options.dbPool?.max !== undefined ? { max: options.dbPool.max } : {}),
      ...(options.dbPool?.admissionMax !== undefined ? { admissionMax: options.dbPool.admissionMax } : {}),
      // One clock for the server and the timestamps the store writes itself.
      ...(options.now !== undefined ? { now: options.now } : {}),
    })
  }
  if (options.dbPath === undefined) throw new RangeError('startServer needs dbPath (SQLite) or dbUrl (PostgreSQL).')
  return createSqliteStore(options.dbPath, options.now !== undefined ? { now: options.now } : {})
}

/**
 * Starts the agent server on @hono/node-server (the CLI and other packages' tests use this).
 * @example
 * const server = await startServer({ dbPath: '/tmp/x/agent.db', tokens: { alice: 'secret' } })
 * // POST `${server.baseUrl}/runs` …
 * await server.close()
 */
export async function startServer(options: StartServerOptions): Promise<RunningServer> {
  // Before the store opens: a second exclusive process must not even migrate the file.
  const lock = lockFor(options)
  let store: Store
  try {
    store = await openStore(options)
  } catch (error) {
    lock?.release()
    throw error
  }
  let metricsServer: Server | undefined
  try {
    const agent =
      options.agent ??
      (options.model === 'openai'
        ? releaseAssistant({ model: openaiModel(options.openai ?? {}) })
        : releaseAssistant({ pacingMs: options.pacingMs ?? 0 }))
    const app = createAgentServer({
      agent,
      store,
      authenticate: authenticatorFor(options, store, options.warn ?? defaultWarn),
      ...(options.basePath !== undefined ? { basePath: options.basePath } : {}),
      ...(options.now !== undefined ? { now: options.now } : {}),
      ...(options.interruptTtlSeconds !== undefined ? { interruptTtlSeconds: options.interruptTtlSeconds } : {}),
      ...(options.onExpiry !== undefined ? { onExpiry: options.onExpiry } : {}),
      ...(options.expirySweepMs !== undefined ? { expirySweepMs: options.expirySweepMs } : {}),
      ...(options.limits !== undefined ? { limits: options.limits } : {}),
      ...(options.logError !== undefined ? { logError: options.logError } : {}),
      ...(options.heartbeatMs !== undefined ? { heartbeatMs: options.heartbeatMs } : {}),
      ...(options.exclusive !== undefined ? { exclusive: options.exclusive } : {}),
      ...(options.runLeaseMs !== undefined ? { runLeaseMs: options.runLeaseMs } : {}),
      ...(options.pollMs !== undefined ? { pollMs: options.pollMs } : {}),
      ...(options.canDecide !== undefined ? { canDecide: options.canDecide } : {}),
      ...(options.approvers !== undefined ? { approvers: options.approvers } : {}),
      ...(options.webhooks !== undefined ? { webhooks: options.webhooks } : {}),
      ...(options.cors !== undefined ? { cors: options.cors } : {}),
      ...(options.webhookDelivery !== undefined ? { webhookDelivery: options.webhookDelivery } : {}),
      logger: options.logger ?? createLogger(options.logLevel !== undefined ? { level: options.logLevel } : {}),
      ...(options.metricsPrincipals !== undefined ? { metricsPrincipals: options.metricsPrincipals } : {}),
      processMetrics: options.metricsPort !== undefined || (options.metricsPrincipals?.length ?? 0) > 0,
      ...(options.shutdownGraceMs !== undefined ? { shutdownGraceMs: options.shutdownGraceMs } : {}),
      ...(options.admissionTurns !== undefined ? { admissionTurns: options.admissionTurns } : {}),
      ...(options.onQuotaRefused !== undefined ? { onQuotaRefused: options.onQuotaRefused } : {}),
      ...(options.usage !== undefined ? { usage: options.usage } : {}),
    })
    await app.ready()
    // No dotfiles, no symlinks out of the root, nosniff / CSP frame-ancestors / Referrer-Policy (README).
    if (options.staticDir !== undefined) app.use('*', staticFiles(options.staticDir))
    const host = options.host ?? '127.0.0.1'
    const limits = { ...DEFAULT_LIMITS, ...options.limits }
    checkConnectionLimits(limits)
    const { server, port } = await new Promise<{ server: Server; port: number }>((resolve, reject) => {
      const s = serve(
        {
          fetch: app.fetch,
          port: options.port ?? 0,
          hostname: host,
          // Slow-header and slow-body clients are cut off by Node itself (README "Quotas and limits").
          serverOptions: serverTimeoutOptions(limits),
        },
        (info: AddressInfo) => resolve({ server: s as Server, port: info.port }),
      )
      capConnections(s as Server, limits)
      s.once('error', reject)
    })
    const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`
    let metricsUrl: string | undefined
    if (options.metricsPort !== undefined) {
      const metricsHost = options.metricsHost ?? '127.0.0.1'
      const started = await serveMetrics(app, options.metricsPort, metricsHost)
      metricsServer = started.server
      metricsUrl = `http://${metricsHost.includes(':') ? `[${metricsHost}]` : metricsHost}:${started.port}/metrics`
    }
    let closing: Promise<void> | undefined
    return {
      url,
      baseUrl: `${url}${app.basePath}`,
      port,
      app,
      store,
      ...(metricsUrl !== undefined ? { metricsUrl } : {}),
      close: () => {
        closing ??= (async () => {
          const closed = new Promise<void>((resolve) => server.close(() => resolve()))
          metricsServer?.close()
          metricsServer?.closeAllConnections()
          await app.close()
          // Streams of finished runs end by themselves; drop idle keep-alive sockets.
          server.closeAllConnections()
          await closed
          lock?.release()
        })()
        return closing
      },
      shutdown: async (graceMs?: number) => {
        let handedOver = 0
        closing ??= (async () => {
          // The listener stays open while draining: new requests are answered 503 SERVER_SHUTTING_DOWN.
          handedOver = await app.shutdown(graceMs)
          const closed = new Promise<void>((resolve) => server.close(() => resolve()))
          server.closeAllConnections()
          await closed
        })()
        await closing
        return handedOver
      },
    }
  } catch (error) {
    metricsServer?.close()
    await store.close()
    lock?.release()
    throw error
  }
}

/** `GET /metrics` on a port of its own (no authentication: bind it where only the scraper reaches). */
async function serveMetrics(app: AgentServer, port: number, host: string): Promise<{ server: Server; port: number }> {
  const server = http.createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found\n')
      return
    }
    app.metrics.text().then(
      (text) => res.writeHead(200, { 'Content-Type': app.metrics.contentType }).end(text),
      () => res.writeHead(500, { 'Content-Type': 'text/plain' }).end('metrics failed\n'),
    )
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => resolve())
  })
  return { server, port: (server.address() as AddressInfo).port }
}
