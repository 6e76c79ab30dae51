import http from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Server } from 'node:http'
import { serve } from '@hono/node-server'
import type { AgentDefinition } from './agent/agent.ts'
import type { Authenticate } from './auth/authenticate.ts'
import { anonymousSessionCookie, bearerTokens, weakTokenNames } from './auth/authenticate.ts'
import { resolveSessionSecret } from './auth/session-secret.ts'
import { systemClock } from './clock.ts'
import { SERVER_DEFAULTS } from './config/defaults.ts'
import { releaseAssistant } from './demo/release-assistant.ts'
import type { AgentServer, AgentServerOptions } from './http/app.ts'
import { createAgentServer } from './http/app.ts'
import type { ConnectionCaps, ConnectionStats } from './http/connection-caps.ts'
import { capConnections } from './http/connection-caps.ts'
import { serverTimeoutOptions } from './http/connection-limits.ts'
import { staticFiles } from './http/middleware/static-files.ts'
import type { OpenAIModelOptions } from './models/openai.ts'
import { openaiModel } from './models/openai.ts'
import { checkOpenAISetup } from './models/openai-setup.ts'
import { createLogger } from './observability/logger.ts'
import type { LogLevel } from './observability/logger.ts'
import { createPostgresStore, DEFAULT_SCHEMA } from './store/postgres/postgres-store.ts'
import { acquireSqliteLock } from './store/sqlite/process-lock.ts'
import type { ProcessLock } from './store/sqlite/process-lock.ts'
import { createSqliteStore } from './store/sqlite/sqlite-store.ts'
import type { Store } from './store/store.ts'

/**
 * `createAgentServer`'s settings (each with its default, `ServerOptions`), plus where to listen, the store to open,
 * how to authenticate and which agent to serve. Absent (or `undefined`) options take their defaults.
 */
export interface StartServerOptions extends Omit<AgentServerOptions, 'agent' | 'store' | 'authenticate'> {
  /** A custom agent. @default the release assistant on `model` */
  readonly agent?: AgentDefinition | undefined
  /** @default SERVER_DEFAULTS.port (an ephemeral port) */
  readonly port?: number | undefined
  /** @default SERVER_DEFAULTS.host */
  readonly host?: string | undefined
  /** SQLite file (created on first start). One of `dbPath` / `dbUrl` is required. */
  readonly dbPath?: string | undefined
  /** `postgres://…` URL: the PostgreSQL store (schema and tables created on first start). */
  readonly dbUrl?: string | undefined
  /** PostgreSQL schema of the tables. @default DEFAULT_SCHEMA ('interlude') */
  readonly dbSchema?: string | undefined
  /** PostgreSQL pool sizes (`PostgresStoreOptions.max`, `.admissionMax`). @default SERVER_DEFAULTS.dbPool */
  readonly dbPool?: { readonly max?: number | undefined; readonly admissionMax?: number | undefined } | undefined
  /** The release assistant's model. @default SERVER_DEFAULTS.model */
  readonly model?: 'scripted' | 'openai' | undefined
  /** Options of the OpenAI provider (defaults: SERVER_DEFAULTS.openai, and OPENAI_* environment variables). */
  readonly openai?: OpenAIModelOptions | undefined
  /** Bearer tokens by principal name; without them, signed anonymous-session cookies are used. */
  readonly tokens?: Readonly<Record<string, string>> | undefined
  /**
   * Secret of the anonymous-session cookies (README "Sessions and secrets"). @default `INTERLUDE_SESSION_SECRET`,
   * else (SQLite) a random secret kept in `<db>.session-secret` (mode 0600); PostgreSQL requires the variable
   */
  readonly sessionSecret?: string | undefined
  /** Server-side lifetime of an anonymous session from its issue time. @default SERVER_DEFAULTS.sessionMaxAgeSeconds */
  readonly sessionMaxAgeSeconds?: number | undefined
  /**
   * `Secure` + `__Host-` session cookies: always, never, or when the request is HTTPS.
   * @default SERVER_DEFAULTS.secureCookies
   */
  readonly secureCookies?: boolean | 'auto' | undefined
  /** Believe `X-Forwarded-Proto` from a TLS-terminating proxy (for `secureCookies: 'auto'`). @default false */
  readonly trustProxy?: boolean | undefined
  /** Startup warnings (weak tokens, a public bind without tokens, a loosened secret file). @default stderr */
  readonly warn?: ((message: string) => void) | undefined
  /** Scripted-model token pacing in ms. @default SERVER_DEFAULTS.pacingMs */
  readonly pacingMs?: number | undefined
  /** Demo agent: principals who may post `notify_oncall`'s result besides the owner (docs/demo-agent.md). */
  readonly oncall?: readonly string[] | undefined
  /**
   * Demo agent: approvals a `deploy` to production needs, from the `approvers`; above 1 never the requester's own
   * (docs/demo-agent.md). @default 1
   */
  readonly productionQuorum?: number | undefined
  /** Serve this directory (the built workbench) at `/`. */
  readonly staticDir?: string | undefined
  /**
   * Level of the default logger (ignored with `logger`).
   * @default `INTERLUDE_LOG_LEVEL`, else info (silent under vitest)
   */
  readonly logLevel?: LogLevel | undefined
  /** Serve `GET /metrics` (Prometheus text, no authentication) on this port of `metricsHost`; 0: any free port. */
  readonly metricsPort?: number | undefined
  /** @default SERVER_DEFAULTS.metricsHost */
  readonly metricsHost?: string | undefined
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
  readonly metricsUrl?: string | undefined
  /** What the connection caps see now: open, idle and waiting sockets (docs/decisions.md#connections). */
  connections(): ConnectionStats
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
  const host = options.host ?? SERVER_DEFAULTS.host
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
    maxAgeSeconds: options.sessionMaxAgeSeconds,
    secure: options.secureCookies,
    trustProxy: options.trustProxy,
  })
}

/**
 * Decision links are signed with the session secret, resolved the same way (docs/approvals.md#deciding-outside-the-app):
 * no second secret to keep, and replicas on PostgreSQL share it through `INTERLUDE_SESSION_SECRET`.
 */
function linkSecretFor(options: StartServerOptions, store: Store, warn: (message: string) => void): string | undefined {
  if (options.publicUrl === undefined || options.linkSecret !== undefined) return options.linkSecret
  const sqlitePath = store.kind === 'sqlite' ? (options.dbPath ?? ':memory:') : undefined
  return resolveSessionSecret({ explicit: options.sessionSecret, env: process.env, sqlitePath, warn })
}

/** The demo agent on `model` (`--model`): scripted, or OpenAI with `openai`'s bounds. */
function releaseAssistantFor(options: StartServerOptions): AgentDefinition {
  const oncall = options.oncall ?? []
  const production = { productionQuorum: options.productionQuorum ?? 1, approvers: options.approvers ?? [] }
  return (options.model ?? SERVER_DEFAULTS.model) === 'openai'
    ? releaseAssistant({ model: openaiModel(options.openai), oncall, ...production })
    : releaseAssistant({ pacingMs: options.pacingMs ?? SERVER_DEFAULTS.pacingMs, oncall, ...production })
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
  // One clock for the server and the timestamps the store writes itself.
  const now = options.now ?? systemClock
  const url =
    options.dbUrl ?? (options.dbPath !== undefined && isPostgresUrl(options.dbPath) ? options.dbPath : undefined)
  if (url !== undefined) {
    if (!isPostgresUrl(url)) throw new RangeError('dbUrl must be a postgres:// URL.')
    return createPostgresStore({
      connectionString: url,
      schema: options.dbSchema ?? DEFAULT_SCHEMA,
      max: options.dbPool?.max ?? SERVER_DEFAULTS.dbPool.max,
      admissionMax: options.dbPool?.admissionMax ?? SERVER_DEFAULTS.dbPool.admissionMax,
      now,
    })
  }
  if (options.dbPath === undefined) throw new RangeError('startServer needs dbPath (SQLite) or dbUrl (PostgreSQL).')
  return createSqliteStore(options.dbPath, { now })
}

/**
 * Starts the agent server on @hono/node-server (the CLI and other packages' tests use this).
 * @example
 * const server = await startServer({ dbPath: '/tmp/x/agent.db', tokens: { alice: 'secret' } })
 * // POST `${server.baseUrl}/runs` …
 * await server.close()
 */
export async function startServer(options: StartServerOptions): Promise<RunningServer> {
  // A missing key or package is a sentence at startup, not a retryable failure of every run.
  if (options.agent === undefined && (options.model ?? SERVER_DEFAULTS.model) === 'openai')
    await checkOpenAISetup(options.openai)
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
    const app = createAgentServer({
      ...options,
      agent: options.agent ?? releaseAssistantFor(options),
      store,
      authenticate: authenticatorFor(options, store, options.warn ?? defaultWarn),
      linkSecret: linkSecretFor(options, store, options.warn ?? defaultWarn),
      logger: options.logger ?? createLogger({ level: options.logLevel }),
      // Process metrics wherever metrics are read.
      processMetrics:
        options.processMetrics ?? (options.metricsPort !== undefined || (options.metricsPrincipals?.length ?? 0) > 0),
    })
    await app.ready()
    // No dotfiles, no symlinks out of the root, nosniff / CSP frame-ancestors / Referrer-Policy (README).
    if (options.staticDir !== undefined) app.use('*', staticFiles(options.staticDir))
    const host = options.host ?? SERVER_DEFAULTS.host
    const { limits } = app.config
    let caps: ConnectionCaps | undefined
    const { server, port } = await new Promise<{ server: Server; port: number }>((resolve, reject) => {
      const s = serve(
        {
          fetch: app.fetch,
          port: options.port ?? SERVER_DEFAULTS.port,
          hostname: host,
          // Slow-header and slow-body clients are cut off by Node itself (README "Quotas and limits").
          serverOptions: serverTimeoutOptions(limits),
        },
        (info: AddressInfo) => resolve({ server: s as Server, port: info.port }),
      )
      caps = capConnections(s as Server, { ...limits, trustProxy: options.trustProxy })
      s.once('error', reject)
    })
    const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`
    let metricsUrl: string | undefined
    if (options.metricsPort !== undefined) {
      const metricsHost = options.metricsHost ?? SERVER_DEFAULTS.metricsHost
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
      metricsUrl,
      connections: () => caps?.stats() ?? { open: 0, idle: 0, waiting: 0, byAddress: new Map() },
      close: () => {
        closing ??= (async () => {
          const closed = new Promise<void>((resolve) => server.close(() => resolve()))
          metricsServer?.close()
          metricsServer?.closeAllConnections()
          await app.close()
          // Streams of finished runs end by themselves; drop idle keep-alive sockets and waiting ones.
          server.closeAllConnections()
          caps?.closeWaiting()
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
          caps?.closeWaiting()
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
