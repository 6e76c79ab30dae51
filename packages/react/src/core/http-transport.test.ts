import type { RunAgentInput } from '@interlude/protocol'
import { describe, expect, it } from 'vitest'
import { ChatRuntime } from './chat-runtime.ts'
import { createHttpTransport } from './http-transport.ts'

const input: RunAgentInput = {
  threadId: 't',
  runId: 'r',
  messages: [],
  tools: [],
  context: [],
  state: {},
  forwardedProps: {},
}

function recorder(respond: (url: string, init: RequestInit) => Response | Promise<Response>) {
  const calls: { url: string; init: RequestInit; headers: Headers }[] = []
  const fetchImpl: typeof fetch = async (url, init = {}) => {
    calls.push({ url: String(url), init, headers: new Headers(init.headers) })
    return respond(String(url), init)
  }
  return { calls, fetch: fetchImpl }
}

const sse = (text: string, type = 'text/event-stream') =>
  new Response(text, { status: 200, headers: { 'Content-Type': type } })

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = []
  for await (const x of it) out.push(x)
  return out
}

describe('createHttpTransport', () => {
  it('POSTs RunAgentInput with configurable headers and credentials and decodes ids and events', async () => {
    const r = recorder(() =>
      sse(
        'id: 7\ndata: {"type":"RUN_STARTED","threadId":"t","runId":"r"}\n\n: ping\n\nid: 8\ndata: {"type":"RUN_FINISHED","threadId":"t","runId":"r"}\n\n',
      ),
    )
    let token = 'one'
    const transport = createHttpTransport({
      baseUrl: 'http://x/api/agent/',
      headers: () => ({ Authorization: `Bearer ${token}` }),
      credentials: 'include',
      fetch: r.fetch,
    })
    const events = (await collect(transport.run(input, { signal: new AbortController().signal }))).flat()
    expect(events.map((e) => [e.id, e.event.type])).toEqual([
      ['7', 'RUN_STARTED'],
      ['8', 'RUN_FINISHED'],
    ])
    expect(r.calls[0]).toMatchObject({
      url: 'http://x/api/agent/runs',
      init: { method: 'POST', credentials: 'include' },
    })
    expect(JSON.parse(r.calls[0]!.init.body as string)).toEqual(input)
    expect(r.calls[0]!.headers.get('authorization')).toBe('Bearer one')
    expect(r.calls[0]!.headers.get('accept')).toBe('text/event-stream')
    token = 'two' // read before every request
    await collect(transport.connect('t/1', { lastEventId: '8', signal: new AbortController().signal }))
    expect(r.calls[1]!.url).toBe('http://x/api/agent/threads/t%2F1/events?after=8')
    expect(r.calls[1]!.headers.get('last-event-id')).toBe('8')
    expect(r.calls[1]!.headers.get('authorization')).toBe('Bearer two')
  })

  it('turns the admission envelope into a typed InterludeError with details', async () => {
    const body = { error: { code: 'ALREADY_RESUMED', message: 'already', details: { runId: 'first' } } }
    const transport = createHttpTransport({
      fetch: recorder(
        () => new Response(JSON.stringify(body), { status: 409, headers: { 'Content-Type': 'application/json' } }),
      ).fetch,
    })
    await expect(collect(transport.run(input, { signal: new AbortController().signal }))).rejects.toMatchObject({
      code: 'ALREADY_RESUMED',
      details: { runId: 'first' },
      retryable: false,
    })
  })

  it('maps other failures to typed codes (proxy 502 → retryable NETWORK_ERROR, fetch failure, wrong content type)', async () => {
    const signal = new AbortController().signal
    const proxy = createHttpTransport({
      fetch: recorder(() => new Response('<html>bad gateway</html>', { status: 502 })).fetch,
    })
    await expect(collect(proxy.run(input, { signal }))).rejects.toMatchObject({
      code: 'NETWORK_ERROR',
      retryable: true,
    })
    const down = createHttpTransport({ fetch: async () => Promise.reject(new TypeError('fetch failed')) })
    await expect(collect(down.run(input, { signal }))).rejects.toMatchObject({ code: 'NETWORK_ERROR' })
    const html = createHttpTransport({ fetch: recorder(() => sse('<html/>', 'text/html')).fetch })
    await expect(collect(html.run(input, { signal }))).rejects.toMatchObject({
      code: 'PROTOCOL_ERROR',
      details: { reason: 'not_event_stream' },
    })
    const garbage = createHttpTransport({ fetch: recorder(() => sse('data: {not json\n\n')).fetch })
    await expect(collect(garbage.run(input, { signal }))).rejects.toMatchObject({
      code: 'PROTOCOL_ERROR',
      details: { reason: 'invalid_json' },
    })
    const aborted = new AbortController()
    aborted.abort()
    const abortable = createHttpTransport({
      fetch: async (_u, init) => Promise.reject(init?.signal?.reason ?? new Error('aborted')),
    })
    await expect(collect(abortable.run(input, { signal: aborted.signal }))).rejects.toMatchObject({ code: 'ABORTED' })
  })

  it('maps answers without the envelope with the protocol table: 429 retryable RATE_LIMITED, 401 UNAUTHENTICATED', async () => {
    const signal = new AbortController().signal
    const cases: [number, string, boolean][] = [
      [429, 'RATE_LIMITED', true],
      [401, 'UNAUTHENTICATED', false],
      [403, 'UNAUTHENTICATED', false],
      [404, 'NOT_FOUND', false],
      [413, 'PAYLOAD_TOO_LARGE', false],
      [422, 'INVALID_INPUT', false],
      [503, 'NETWORK_ERROR', true],
    ]
    for (const [status, code, retryable] of cases) {
      const transport = createHttpTransport({ fetch: recorder(() => new Response('Nope', { status })).fetch })
      await expect(collect(transport.run(input, { signal })), String(status)).rejects.toMatchObject({
        code,
        retryable,
        message: `The server answered HTTP ${status} without an error envelope.`,
        details: { reason: 'no_envelope', status },
      })
    }
  })

  it('reads the ThreadSnapshot and posts an explicit cancel', async () => {
    const snapshot = { threadId: 't', revision: 2, status: 'idle', messages: [], state: {}, lastEventId: 4 }
    const r = recorder((url) =>
      url.endsWith('/cancel')
        ? new Response(null, { status: 202 })
        : new Response(JSON.stringify(snapshot), { status: 200 }),
    )
    const transport = createHttpTransport({ fetch: r.fetch })
    expect(await transport.getThread('t')).toEqual(snapshot)
    await transport.cancel!('t', 'r 1')
    expect(r.calls[1]!.headers.get('content-type')).toBe('application/json')
    expect(r.calls.map((c) => [c.init.method, c.url])).toEqual([
      ['GET', '/api/agent/threads/t'],
      ['POST', '/api/agent/threads/t/runs/r%201/cancel'],
    ])
  })

  it('posts a fork and reads the forks of a thread under the snapshot route', async () => {
    const created = { threadId: 'f', parent: { threadId: 't 1', at: { messageId: 'm' } } }
    const forks = [{ threadId: 'f', at: { messageId: 'm' }, createdAt: '2026-12-02T10:00:00Z' }]
    const r = recorder((url) => new Response(JSON.stringify(url.endsWith('/fork') ? created : { items: forks })))
    const transport = createHttpTransport({ fetch: r.fetch, headers: { Authorization: 'Bearer x' } })
    const request = { at: { messageId: 'm' }, threadId: 'f', edit: { messageId: 'm', content: 'new' } }
    expect(await transport.fork!('t 1', request)).toEqual(created)
    expect(await transport.forks!('t 1')).toEqual(forks)
    expect(r.calls.map((c) => [c.init.method, c.url, c.init.body])).toEqual([
      ['POST', '/api/agent/threads/t%201/fork', JSON.stringify(request)],
      ['GET', '/api/agent/threads/t%201/forks', undefined],
    ])
    expect(r.calls.map((c) => c.headers.get('authorization'))).toEqual(['Bearer x', 'Bearer x'])
    expect(r.calls.map((c) => c.headers.get('content-type'))).toEqual(['application/json', null])
  })

  it('reports SSE comments (the server ping) as activity on run and connect streams', async () => {
    const r = recorder(() =>
      sse(': ping\n\nid: 1\ndata: {"type":"RUN_STARTED","threadId":"t","runId":"r"}\n\n: ping\n\n'),
    )
    const transport = createHttpTransport({ baseUrl: 'http://x', fetch: r.fetch })
    let pings = 0
    const onActivity = () => void pings++
    const events = (await collect(transport.run(input, { signal: new AbortController().signal, onActivity }))).flat()
    expect(events.map((e) => e.event.type)).toEqual(['RUN_STARTED'])
    expect(pings).toBe(2)
    await collect(transport.connect('t', { lastEventId: undefined, signal: new AbortController().signal, onActivity }))
    expect(pings).toBe(4)
  })
})

describe('createHttpTransport: endpoints', () => {
  const finished = () =>
    sse(
      'data: {"type":"RUN_STARTED","threadId":"t","runId":"r"}\n\ndata: {"type":"RUN_FINISHED","threadId":"t","runId":"r"}\n\n',
    )
  const signal = new AbortController().signal

  it('posts to runUrl and keeps the other defaults under baseUrl', async () => {
    const r = recorder((url) =>
      url.endsWith('/cancel') ? new Response('{}', { status: 200 }) : url.includes('/events') ? finished() : finished(),
    )
    const transport = createHttpTransport({ baseUrl: 'http://x/api', runUrl: 'http://x/awp', fetch: r.fetch })
    await collect(transport.run(input, { signal }))
    await collect(transport.connect('t 1', { lastEventId: '3', signal }))
    await transport.cancel!('t 1', 'r/1')
    expect(r.calls.map((c) => c.url)).toEqual([
      'http://x/awp',
      'http://x/api/threads/t%201/events?after=3',
      'http://x/api/threads/t%201/runs/r%2F1/cancel',
    ])
  })

  it('takes templates and functions for every endpoint; follow defaults to events', async () => {
    const r = recorder((url) =>
      url.includes('snap')
        ? new Response(JSON.stringify({ threadId: 't', messages: [], revision: 0, status: 'idle', lastEventId: 0 }), {
            status: 200,
            headers: { 'Content-Type': 'application/json' },
          })
        : finished(),
    )
    const endpoints = {
      run: ({ threadId, runId }: { threadId: string; runId: string | undefined }) => `/agents/${threadId}/${runId}`,
      events: '/log/{threadId}?x=1',
      snapshot: '/snap/{threadId}',
    }
    const transport = createHttpTransport({ runUrl: '/ignored', endpoints: () => endpoints, fetch: r.fetch })
    await collect(transport.run(input, { signal }))
    await collect(transport.connect('t', { lastEventId: '0', signal, follow: true }))
    await transport.getThread('t')
    expect(r.calls.map((c) => c.url)).toEqual(['/agents/t/r', '/log/t?x=1&after=0', '/snap/t'])
  })
})

describe('ChatRuntime: runUrl and endpoints options', () => {
  it('posts a send to runUrl with state always present (`{}` when none)', async () => {
    const r = recorder((_url, init) => {
      const body = JSON.parse(init.body as string) as RunAgentInput
      return sse(
        `data: {"type":"RUN_STARTED","threadId":"${body.threadId}","runId":"${body.runId}"}\n\n` +
          `data: {"type":"RUN_FINISHED","threadId":"${body.threadId}","runId":"${body.runId}"}\n\n`,
      )
    })
    const rt = new ChatRuntime({ threadId: 't', runUrl: 'http://x/awp', fetch: r.fetch })
    await rt.sendMessage('hi')
    expect(rt.getSnapshot().error).toBeUndefined()
    expect(r.calls.map((c) => c.url)).toEqual(['http://x/awp'])
    expect(JSON.parse(r.calls[0]!.init.body as string)).toMatchObject({ state: {} })
    rt.updateOptions({ endpoints: { run: '/v2/{threadId}/runs' } })
    await rt.sendMessage('again')
    expect(r.calls[1]!.url).toBe('/v2/t/runs')
    rt.dispose()
  })
})
