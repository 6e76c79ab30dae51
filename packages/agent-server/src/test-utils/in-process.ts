import { afterEach } from 'vitest'
import { decodeEvents } from '@interlude/protocol/sse'
import type { AgUiEvent, ErrorEnvelope } from '@interlude/protocol'
import { bearerTokens } from '../auth/authenticate.ts'
import { releaseAssistant } from '../demo/release-assistant.ts'
import type { AgentServer, AgentServerOptions } from '../http/app.ts'
import { createAgentServer } from '../http/app.ts'
import { NO_PRINCIPAL_QUOTAS } from '../config/limits.ts'
import { createSqliteStore } from '../store/sqlite/sqlite-store.ts'
import type { Store } from '../store/store.ts'
import type { RunResponse } from './harness.ts'
import { authHeader, tempDir, TOKENS } from './harness.ts'

type Principal = keyof typeof TOKENS

export interface InProcessOptions extends Partial<Omit<AgentServerOptions, 'store'>> {
  /** An existing SQLite file (a restart); by default a fresh one in a temp directory. */
  readonly dbPath?: string
  /** Another store (e.g. PostgreSQL) instead of a SQLite file; `dbPath` is then empty. Closed with the server. */
  readonly store?: Store
}

export interface RequestOptions extends RequestInit {
  /** Sent as a bearer token; `null` sends none. @default 'alice' */
  readonly principal?: Principal | null
  /** Whose thread the request addresses when it is not the caller's own (`?owner=`). */
  readonly owner?: string
}

/** `path` addressing `owner`'s thread (`?owner=`, docs/protocol.md#thread-ids). */
function withOwner(path: string, owner: string | undefined): string {
  if (owner === undefined) return path
  return `${path}${path.includes('?') ? '&' : '?'}owner=${encodeURIComponent(owner)}`
}

/** `createAgentServer` over a SQLite file, driven through `app.request` (no port, no socket). */
export interface InProcessServer {
  readonly app: AgentServer
  readonly store: Store
  readonly dbPath: string
  /** Every `logError` call of the server (empty when the test passed its own `logError`). */
  readonly logged: { message: string; error: unknown }[]
  /** A request to `{base}{path}`, e.g. `/threads/t1`. */
  request(path: string, options?: RequestOptions): Promise<Response>
  /** `POST {base}/runs` as JSON, read to the end. */
  postRun(body: unknown, options?: RequestOptions & { readonly rawBody?: string | Uint8Array }): Promise<RunResponse>
  /** `GET {base}/threads/:threadId/events` (the replay and live tail), read to the end. */
  threadEvents(threadId: string, options?: RequestOptions): Promise<RunResponse>
  /** Closes the server and its store; the file stays (start another on `dbPath` to restart). */
  close(): Promise<void>
  /** Closes the server and removes its directory (when it made one). */
  dispose(): Promise<void>
}

/**
 * A response read to the end: an SSE body through the protocol's decoder (events and their ids),
 * or the JSON error envelope.
 */
export async function readRunResponse(response: Response): Promise<RunResponse> {
  const { status, headers } = response
  if (!headers.get('content-type')?.startsWith('text/event-stream') || !response.body) {
    const raw = await response.text()
    let error: ErrorEnvelope['error'] | undefined
    try {
      error = (JSON.parse(raw) as ErrorEnvelope).error
    } catch {
      error = undefined
    }
    return { status, headers, events: [], ids: [], error, raw }
  }
  const [text, frames] = response.body.tee()
  const events: AgUiEvent[] = []
  const ids: (string | undefined)[] = []
  const [raw] = await Promise.all([
    new Response(text).text(),
    (async () => {
      for await (const decoded of decodeEvents(frames)) {
        events.push(decoded.event)
        ids.push(decoded.id)
      }
    })(),
  ])
  return { status, headers, events, ids, error: undefined, raw }
}

/** The agent server in this process over a SQLite file, with bearer tokens for alice and bob (by default). */
export async function startInProcess(options: InProcessOptions = {}): Promise<InProcessServer> {
  const { dbPath: existing, store: given, ...serverOptions } = options
  const tmp = existing === undefined && given === undefined ? tempDir() : undefined
  const dbPath = given !== undefined ? '' : (existing ?? tmp!.dbPath)
  const logged: { message: string; error: unknown }[] = []
  const store = given ?? createSqliteStore(dbPath)
  let app: AgentServer
  try {
    app = createAgentServer({
      agent: releaseAssistant({ pacingMs: 0 }),
      logError: (message, error) => {
        logged.push({ message, error })
      },
      ...serverOptions,
      // One principal here stands for many users: per-principal quotas only where a test sets them.
      limits: { ...NO_PRINCIPAL_QUOTAS, ...serverOptions.limits },
      store,
      // Bearer tokens for alice and bob unless the test brings its own (e.g. one that blocks).
      authenticate: serverOptions.authenticate ?? bearerTokens(TOKENS),
    })
  } catch (error) {
    // A refused option: nothing is left open or behind.
    await store.close()
    tmp?.cleanup()
    throw error
  }
  await app.ready()
  const request = async (path: string, { principal = 'alice', owner, headers, ...init }: RequestOptions = {}) =>
    app.request(`http://localhost${app.basePath}${withOwner(path, owner)}`, {
      ...init,
      headers: { ...(principal ? authHeader(principal) : {}), ...(headers as Record<string, string> | undefined) },
    })
  return {
    app,
    store,
    dbPath,
    logged,
    request,
    postRun: async (body, { rawBody, headers, ...init } = {}) =>
      readRunResponse(
        await request('/runs', {
          ...init,
          method: 'POST',
          headers: { 'Content-Type': 'application/json', ...(headers as Record<string, string> | undefined) },
          body:
            rawBody === undefined
              ? JSON.stringify(body)
              : typeof rawBody === 'string'
                ? rawBody
                : new Blob([new Uint8Array(rawBody)]),
        }),
      ),
    threadEvents: async (threadId, { owner, ...init } = {}) =>
      readRunResponse(
        await request(
          `/threads/${threadId}/events${owner === undefined ? '' : `?owner=${encodeURIComponent(owner)}`}`,
          init,
        ),
      ),
    close: () => app.close(),
    dispose: async () => {
      await app.close()
      tmp?.cleanup()
    },
  }
}

/**
 * `server(options)` for a test file: an in-process server with `defaults` under `options`, disposed after each test.
 * Call it at the top level of the file (it registers the `afterEach`).
 */
export function serversPerTest(
  defaults: InProcessOptions = {},
): (options?: InProcessOptions) => Promise<InProcessServer> {
  const started: InProcessServer[] = []
  afterEach(async () => {
    for (const s of started.splice(0)) await s.dispose()
  })
  return async (options = {}) => {
    const s = await startInProcess({ ...defaults, ...options })
    started.push(s)
    return s
  }
}
