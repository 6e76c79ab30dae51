import { errorFromFetch, errorFromResponse, InterludeError } from '@interlude/protocol'
import type { DecisionsClientOptions } from './client-options.ts'
import { readLazy } from './client-options.ts'

export interface JsonRequest {
  readonly method: 'GET' | 'POST' | 'DELETE'
  /** Path below the base URL, already encoded, e.g. `/threads/t%201/runs/r1`. */
  readonly path: string
  readonly body?: unknown
  readonly signal?: AbortSignal | undefined
}

export interface HttpClient {
  /** A JSON request; the 2xx answer's body must pass `accept`, else `PROTOCOL_ERROR`. */
  json<T>(request: JsonRequest, accept: (body: unknown) => body is T, what: string): Promise<T>
  /** A request whose 2xx answer has no body to read (`204`); non-2xx answers throw the typed error. */
  empty(request: JsonRequest): Promise<void>
  /** A GET whose 2xx `Response` is handed over unread (SSE). Non-2xx answers throw the typed error. */
  open(path: string, headers: Record<string, string>, signal: AbortSignal): Promise<Response>
}

/** fetch, headers and the error mapping shared by every route of the client. No Node built-ins. */
export function createHttpClient(options: DecisionsClientOptions): HttpClient {
  const base = options.baseUrl.replace(/\/+$/, '')
  // Read at call time so a test or a polyfill can replace the global after the client was created.
  const doFetch: typeof fetch = (input, init) => (options.fetch ?? globalThis.fetch)(input, init)

  async function headersWith(extra: Record<string, string>): Promise<Headers> {
    const headers = new Headers(await readLazy(options.headers))
    const token = await readLazy(options.token)
    if (token !== undefined) headers.set('Authorization', `Bearer ${token}`)
    for (const [name, value] of Object.entries(extra)) headers.set(name, value)
    return headers
  }

  async function send(path: string, init: RequestInit, extra: Record<string, string>): Promise<Response> {
    const signal = init.signal ?? undefined
    let response: Response
    try {
      response = await doFetch(`${base}${path}`, { ...init, headers: await headersWith(extra) })
    } catch (error) {
      throw errorFromFetch(error, signal)
    }
    if (!response.ok) throw await errorFromResponse(response)
    return response
  }

  return {
    async json<T>(request: JsonRequest, accept: (body: unknown) => body is T, what: string): Promise<T> {
      const init: RequestInit = { method: request.method }
      const extra: Record<string, string> = { Accept: 'application/json' }
      if (request.body !== undefined) {
        init.body = JSON.stringify(request.body)
        extra['Content-Type'] = 'application/json'
      }
      if (request.signal) init.signal = request.signal
      const response = await send(request.path, init, extra)
      let body: unknown
      try {
        body = await response.json()
      } catch (error) {
        if (request.signal?.aborted) throw errorFromFetch(error, request.signal)
        throw new InterludeError('PROTOCOL_ERROR', `The ${what} is not JSON.`, {
          details: { reason: 'invalid_json', status: response.status },
          cause: error,
        })
      }
      if (!accept(body)) {
        throw new InterludeError('PROTOCOL_ERROR', `The ${what} is malformed.`, {
          details: { reason: 'invalid_answer', status: response.status },
        })
      }
      return body
    },

    async empty(request: JsonRequest): Promise<void> {
      const init: RequestInit = { method: request.method }
      if (request.signal) init.signal = request.signal
      const response = await send(request.path, init, { Accept: 'application/json' })
      // Drain so that the connection can be reused; a body on a 204 would be a proxy's business, not ours.
      await response.body?.cancel()
    },

    open(path: string, headers: Record<string, string>, signal: AbortSignal): Promise<Response> {
      return send(path, { method: 'GET', signal }, headers)
    },
  }
}
