import type { AddressInfo } from 'node:net'
import type { ExpiryPolicy } from '@interlude/protocol'
import type { Server } from 'node:http'
import { serve } from '@hono/node-server'
import { serveStatic } from '@hono/node-server/serve-static'
import type { AgentDefinition } from './agent/agent.ts'
import type { CanDecide } from './agent/decider.ts'
import type { Authenticate } from './auth/authenticate.ts'
import { anonymousSessionCookie, bearerTokens, generateSessionSecret } from './auth/authenticate.ts'
import type { Clock } from './clock.ts'
import type { Limits } from './core/limits.ts'
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
import type { UsageOptions } from './core/usage.ts'

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
  /** Secret of the anonymous-session cookies. @default a secret generated once and kept in the store */
  readonly sessionSecret?: string
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
  /** Stops accepting connections, finishes active runs (as cancelled) and closes the store. */
  close(): Promise<void>
}

async function authenticatorFor(options: StartServerOptions, store: Store): Promise<Authenticate> {
  if (options.tokens && Object.keys(options.tokens).length > 0) return bearerTokens(options.tokens)
  const secret =
    options.sessionSecret ??
    process.env.INTERLUDE_SESSION_SECRET ??
    (await store.getOrCreateSetting('session_secret', generateSessionSecret))
  return anonymousSessionCookie({ secret })
}

/** `postgres://` / `postgresql://` URLs select the PostgreSQL store. */
export function isPostgresUrl(value: string): boolean {
  return /^postgres(ql)?:\/\//i.test(value)
}

async function openStore(options: StartServerOptions): Promise<Store> {
  const url =
    options.dbUrl ?? (options.dbPath !== undefined && isPostgresUrl(options.dbPath) ? options.dbPath : undefined)
  if (url !== undefined) {
    if (!isPostgresUrl(url)) throw new RangeError('dbUrl must be a postgres:// URL.')
    return createPostgresStore({
      connectionString: url,
      ...(options.dbSchema !== undefined ? { schema: options.dbSchema } : {}),
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
  const store = await openStore(options)
  try {
    const agent =
      options.agent ??
      (options.model === 'openai'
        ? releaseAssistant({ model: openaiModel(options.openai ?? {}) })
        : releaseAssistant({ pacingMs: options.pacingMs ?? 0 }))
    const app = createAgentServer({
      agent,
      store,
      authenticate: await authenticatorFor(options, store),
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
      ...(options.usage !== undefined ? { usage: options.usage } : {}),
    })
    await app.ready()
    if (options.staticDir !== undefined) app.use('*', serveStatic({ root: options.staticDir }))
    const host = options.host ?? '127.0.0.1'
    const { server, port } = await new Promise<{ server: Server; port: number }>((resolve, reject) => {
      const s = serve({ fetch: app.fetch, port: options.port ?? 0, hostname: host }, (info: AddressInfo) =>
        resolve({ server: s as Server, port: info.port }),
      )
      s.once('error', reject)
    })
    const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`
    let closing: Promise<void> | undefined
    return {
      url,
      baseUrl: `${url}${app.basePath}`,
      port,
      app,
      store,
      close: () => {
        closing ??= (async () => {
          const closed = new Promise<void>((resolve) => server.close(() => resolve()))
          await app.close()
          // Streams of finished runs end by themselves; drop idle keep-alive sockets.
          server.closeAllConnections()
          await closed
        })()
        return closing
      },
    }
  } catch (error) {
    await store.close()
    throw error
  }
}
