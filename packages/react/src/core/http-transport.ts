import type { ForkCreated, ForkRequest, RunAgentInput, ThreadFork, ThreadSnapshot } from '@interlude/protocol'
import { errorFromFetch, errorFromResponse, InterludeError, isRunAccepted } from '@interlude/protocol'
import { decodeEventBatches } from '@interlude/protocol/sse'
import type { Endpoint, EndpointName, Endpoints } from './endpoints.ts'
import { endpointUrl } from './endpoints.ts'
import type { ResolvedOptions } from './options.ts'
import { DEFAULTS } from './options.ts'
import type { ConnectOptions, RunRequestOptions, SubmitAnswer, Transport, TransportEvent } from './transport.ts'
import type { ReconcileEffectOptions } from './types.ts'

type Lazy<T> = T | (() => T)

/** Options of the HTTP + SSE transport (docs/protocol.md). Functions are read before every request. */
export interface HttpTransportOptions {
  /** Base path of the endpoint. @default '/api/agent' */
  readonly baseUrl?: Lazy<string>
  /** Where each request goes; every endpoint defaults to Interlude's route under `baseUrl`. */
  readonly endpoints?: Endpoints | (() => Endpoints | undefined)
  /** Shorthand for `endpoints.run` (e.g. `'/awp'` for a server that takes POST there); `endpoints.run` wins. */
  readonly runUrl?: Endpoint
  /** Extra headers, e.g. `{ Authorization: 'Bearer …' }`. */
  readonly headers?: HeadersInit | (() => HeadersInit | Promise<HeadersInit>)
  /** @default 'same-origin' */
  readonly credentials?: Lazy<RequestCredentials>
  /** @default globalThis.fetch, read at call time (SSR-safe, no window access at import) */
  readonly fetch?: typeof fetch
}

function read<T>(value: Lazy<T> | undefined, fallback: T): T {
  if (value === undefined) return fallback
  return typeof value === 'function' ? (value as () => T)() : value
}

/** Creates the default transport: `fetch` + the protocol SSE codec, typed admission errors. */
export function createHttpTransport(options: HttpTransportOptions = {}): Transport {
  const base = () => read(options.baseUrl, DEFAULTS.api).replace(/\/+$/, '')
  const url = (name: EndpointName, threadId: string, runId?: string): string => {
    const endpoints = typeof options.endpoints === 'function' ? options.endpoints() : options.endpoints
    const merged = options.runUrl === undefined ? endpoints : { run: options.runUrl, ...endpoints }
    return endpointUrl(merged, name, base(), { threadId, runId })
  }
  const doFetch: typeof fetch = (...args) => (options.fetch ?? globalThis.fetch)(...args)

  async function headers(extra: Record<string, string>): Promise<Headers> {
    const h = options.headers
    const resolved = new Headers(typeof h === 'function' ? await h() : h)
    for (const [k, v] of Object.entries(extra)) resolved.set(k, v)
    return resolved
  }

  async function request(target: string, init: RequestInit, extraHeaders: Record<string, string>): Promise<Response> {
    let res: Response
    try {
      res = await doFetch(target, {
        ...init,
        headers: await headers(extraHeaders),
        credentials: read(options.credentials, DEFAULTS.credentials),
      })
    } catch (error) {
      throw errorFromFetch(error, init.signal ?? undefined)
    }
    if (!res.ok) throw await errorFromResponse(res)
    return res
  }

  async function* events(
    res: Response,
    signal: AbortSignal,
    onActivity: (() => void) | undefined,
  ): AsyncGenerator<readonly TransportEvent[]> {
    const type = res.headers.get('content-type') ?? ''
    if (!type.includes('text/event-stream') || !res.body) {
      await res.body?.cancel().catch(() => undefined)
      throw new InterludeError('PROTOCOL_ERROR', 'The response is not an event stream.', {
        details: { reason: 'not_event_stream', contentType: type },
      })
    }
    try {
      // One batch per network read; a malformed frame yields the good events before it, then throws.
      // Comments (the server's `: ping`) carry no event but prove the connection is alive.
      const decode = onActivity ? { signal, onComment: () => onActivity() } : { signal }
      for await (const batch of decodeEventBatches(res.body, decode)) if (batch.length > 0) yield batch
    } catch (error) {
      throw errorFromFetch(error, signal)
    }
  }

  const sse = { Accept: 'text/event-stream' }

  async function post(target: string, body: unknown): Promise<void> {
    await (await send(target, body)).body?.cancel().catch(() => undefined)
  }

  /** A JSON request: `POST` of `body`, or a `GET` without one. */
  function send(target: string, body?: unknown): Promise<Response> {
    const json = { Accept: 'application/json' }
    if (body === undefined) return request(target, { method: 'GET' }, json)
    return request(
      target,
      { method: 'POST', body: JSON.stringify(body) },
      { ...json, 'Content-Type': 'application/json' },
    )
  }

  return {
    async *run(input: RunAgentInput, { signal, onActivity }: RunRequestOptions) {
      const res = await request(
        url('run', input.threadId, input.runId),
        { method: 'POST', body: JSON.stringify(input), signal },
        { ...sse, 'Content-Type': 'application/json' },
      )
      yield* events(res, signal, onActivity)
    },

    async *connect(threadId: string, { lastEventId, signal, onActivity, follow, stay }: ConnectOptions) {
      const extra: Record<string, string> = { ...sse }
      const query: string[] = stay ? ['follow=1'] : []
      if (lastEventId !== undefined) {
        extra['Last-Event-ID'] = lastEventId
        query.push(`after=${encodeURIComponent(lastEventId)}`)
      }
      const target = url(follow ? 'follow' : 'events', threadId)
      const search = query.length === 0 ? '' : `${target.includes('?') ? '&' : '?'}${query.join('&')}`
      const res = await request(`${target}${search}`, { method: 'GET', signal }, extra)
      yield* events(res, signal, onActivity)
    },

    async getThread(
      threadId: string,
      opts: { readonly signal?: AbortSignal; readonly before?: string } = {},
    ): Promise<ThreadSnapshot> {
      const init: RequestInit = { method: 'GET' }
      if (opts.signal) init.signal = opts.signal
      let target = url('snapshot', threadId)
      if (opts.before) target += `${target.includes('?') ? '&' : '?'}before=${encodeURIComponent(opts.before)}`
      const res = await request(target, init, { Accept: 'application/json' })
      let body: unknown
      try {
        body = await res.json()
      } catch (error) {
        throw new InterludeError('PROTOCOL_ERROR', 'The thread snapshot is not JSON.', {
          details: { reason: 'invalid_json' },
          cause: error,
        })
      }
      if (typeof body !== 'object' || body === null || typeof (body as ThreadSnapshot).threadId !== 'string') {
        throw new InterludeError('PROTOCOL_ERROR', 'The thread snapshot is malformed.', {
          details: { reason: 'invalid_snapshot' },
        })
      }
      return body as ThreadSnapshot
    },

    async submit(input: RunAgentInput, opts: { readonly signal?: AbortSignal } = {}): Promise<SubmitAnswer> {
      const init: RequestInit = { method: 'POST', body: JSON.stringify(input) }
      if (opts.signal) init.signal = opts.signal
      const res = await request(url('run', input.threadId, input.runId), init, {
        Accept: 'application/json, text/event-stream',
        'Content-Type': 'application/json',
      })
      // The thread became free meanwhile: the run started with its stream; its events are in the thread log too.
      if (res.status !== 202) {
        await res.body?.cancel().catch(() => undefined)
        return { started: true }
      }
      const body: unknown = await res.json().catch(() => undefined)
      if (isRunAccepted(body)) return 'steered' in body ? { steered: true } : { queued: body.queued }
      throw new InterludeError('PROTOCOL_ERROR', 'The answer to queued input is malformed.', {
        details: { reason: 'invalid_queue_answer' },
      })
    },

    async cancel(threadId: string, runId: string): Promise<void> {
      await post(url('cancel', threadId, runId), {})
    },

    async reconcile(threadId: string, { toolCallId, ...body }: ReconcileEffectOptions): Promise<void> {
      await post(`${url('snapshot', threadId)}/effects/${encodeURIComponent(toolCallId)}/reconcile`, body)
    },

    async claim(threadId: string, toolCallId: string, claimId: string): Promise<void> {
      await post(`${url('snapshot', threadId)}/tool-calls/${encodeURIComponent(toolCallId)}/claim`, { claimId })
    },

    async fork(threadId: string, body: ForkRequest): Promise<ForkCreated> {
      return (await send(`${url('snapshot', threadId)}/fork`, body)).json() as Promise<ForkCreated>
    },

    async forks(threadId: string): Promise<readonly ThreadFork[]> {
      return ((await (await send(`${url('snapshot', threadId)}/forks`)).json()) as { items: ThreadFork[] }).items
    },
  }
}

/** A runtime's default transport: its options are read at request time, so header or credential changes apply next. */
export function optionsTransport(options: () => ResolvedOptions<unknown>): Transport {
  return createHttpTransport({
    baseUrl: () => options().api,
    endpoints: () => {
      const { runUrl, endpoints } = options()
      return runUrl === undefined ? endpoints : { run: runUrl, ...endpoints }
    },
    headers: () => {
      const h = options().headers
      return typeof h === 'function' ? h() : (h ?? {})
    },
    credentials: () => options().credentials,
    fetch: (...args) => (options().fetch ?? globalThis.fetch)(...args),
  })
}
