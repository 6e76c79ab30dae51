import type { ErrorEnvelope, ResumeEntry } from '@interlude/protocol'
import type { TOKENS } from './harness.ts'
import { authHeader } from './harness.ts'

type Principal = keyof typeof TOKENS

/** Anything with `request(path, init)` against `{base}`: the in-process server, or a fetch-based one. */
export interface Requester {
  request(path: string, init?: RequestInit & { readonly principal?: Principal | null }): Promise<Response>
}

/** A JSON answer: status, body, and the error envelope's `error` when there is one. */
export interface JsonAnswer<T = unknown> {
  readonly status: number
  readonly headers: Headers
  readonly body: T
  readonly error: ErrorEnvelope['error'] | undefined
}

/** Reads a response as a `JsonAnswer`. */
export async function readJson<T = unknown>(response: Response): Promise<JsonAnswer<T>> {
  const text = await response.text()
  let body: unknown
  try {
    body = JSON.parse(text) as unknown
  } catch {
    body = text
  }
  const error = (body as Partial<ErrorEnvelope> | undefined)?.error
  return { status: response.status, headers: response.headers, body: body as T, error }
}

/** A decider on another principal's thread: who decides, and whose thread it is (`?owner=`, docs/protocol.md#thread-ids). */
export interface OnBehalf {
  readonly principal: Principal
  readonly owner: string
}

/** `POST {base}/threads/:threadId/decisions` with `{ runId, resume }` (or a raw body). */
export async function postDecision<T = unknown>(
  server: Requester,
  threadId: string,
  body: { readonly runId: string; readonly resume: readonly ResumeEntry[] } | string,
  who: Principal | OnBehalf,
  headers: Record<string, string> = {},
): Promise<JsonAnswer<T>> {
  const principal = typeof who === 'string' ? who : who.principal
  const query = typeof who === 'string' ? '' : `?owner=${encodeURIComponent(who.owner)}`
  return readJson<T>(
    await server.request(`/threads/${encodeURIComponent(threadId)}/decisions${query}`, {
      method: 'POST',
      principal,
      headers: { 'Content-Type': 'application/json', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    }),
  )
}

/** A GET of `{base}{path}` as `principal`, read as JSON. */
export async function getJson<T = unknown>(
  server: Requester,
  path: string,
  principal: Principal,
): Promise<JsonAnswer<T>> {
  return readJson<T>(await server.request(path, { principal }))
}

/** A `Requester` over real HTTP to a started server (`baseUrl`), with the test principals' bearer tokens. */
export function overHttp(server: { readonly baseUrl: string }): Requester {
  return {
    request: (path, { principal = 'alice', headers, ...init } = {}) =>
      fetch(`${server.baseUrl}${path}`, {
        ...init,
        headers: { ...(principal ? authHeader(principal) : {}), ...(headers as Record<string, string> | undefined) },
      }),
  }
}
