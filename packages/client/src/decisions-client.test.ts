/**
 * The client's HTTP layer against a real HTTP server on 127.0.0.1 that answers what a real agent
 * server never would: bodies without the envelope, HTML error pages, lost answers. The client against
 * the real agent server is in `decisions-client.server.test.ts`.
 */
import { describe, expect, it } from 'vitest'
import { createDecisionsClient } from './decisions-client.ts'
import { failure } from './test-utils/failure.ts'
import { scriptedServers, sendJson } from './test-utils/scripted-server.ts'

const serve = scriptedServers()

const page = { items: [], nextCursor: undefined }

describe('requests', () => {
  it('sends the token, extra headers and JSON to the routes under the base path', async () => {
    const server = await serve((req, res) => {
      if (req.url.includes('/decisions')) sendJson(res, 202, { threadId: 't 1', runId: 'run_x' })
      else sendJson(res, 200, page)
    })
    const client = createDecisionsClient({
      baseUrl: `${server.baseUrl}/`,
      token: async () => 'secret',
      headers: { 'X-Bot': 'deploy-bot' },
    })
    await client.pending({ limit: 5, cursor: 'abc' })
    const accepted = await client.decide('t 1', { runId: 'run_x', resume: [] })
    expect(accepted).toEqual({ threadId: 't 1', runId: 'run_x' })
    const [list, decide] = server.requests
    expect(list!.url).toBe('/api/agent/interrupts?status=pending&limit=5&cursor=abc')
    expect(list!.headers.authorization).toBe('Bearer secret')
    expect(list!.headers['x-bot']).toBe('deploy-bot')
    expect(decide!.method).toBe('POST')
    expect(decide!.url).toBe('/api/agent/threads/t%201/decisions')
    expect(decide!.headers['content-type']).toBe('application/json')
    expect(JSON.parse(decide!.body)).toEqual({ runId: 'run_x', resume: [] })
  })

  it('names the owner of another principal’s thread with ?owner= on every thread route', async () => {
    const server = await serve((req, res) => {
      if (req.url.includes('/decisions')) sendJson(res, 202, { threadId: 't 1', runId: 'run_x' })
      else sendJson(res, 500, {})
    })
    const client = createDecisionsClient({ baseUrl: server.baseUrl })
    await client.decide('t 1', { owner: 'e ng', runId: 'run_x', resume: [] })
    await failure(client.run('t 1', 'run_x', { owner: 'e ng' }))
    await failure(client.snapshot('t 1', { owner: 'e ng' }))
    expect(server.requests.map((r) => r.url)).toEqual([
      '/api/agent/threads/t%201/decisions?owner=e%20ng',
      '/api/agent/threads/t%201/runs/run_x?owner=e%20ng',
      '/api/agent/threads/t%201?owner=e%20ng',
    ])
  })

  it('generates a run_<uuid> runId when none is given', async () => {
    const server = await serve((req, res) => sendJson(res, 202, { threadId: 't', runId: JSON.parse(req.body).runId }))
    const { runId } = await createDecisionsClient({ baseUrl: server.baseUrl }).decide('t', { resume: [] })
    expect(runId).toMatch(/^run_[0-9a-f-]{36}$/)
  })

  it('follows nextCursor through every page', async () => {
    const server = await serve((req, res) => {
      const cursor = new URL(req.url, 'http://x').searchParams.get('cursor')
      const n = cursor === null ? 0 : Number(cursor)
      const item = { threadId: `t${n}`, owner: 'eng', interrupts: [] }
      sendJson(res, 200, n < 2 ? { items: [item], nextCursor: String(n + 1) } : { items: [item] })
    })
    const client = createDecisionsClient({ baseUrl: server.baseUrl })
    const seen: string[] = []
    for await (const batch of client.pendingBatches({ limit: 1 })) seen.push(batch.threadId)
    expect(seen).toEqual(['t0', 't1', 't2'])
    expect(server.requests.map((r) => r.url)).toEqual([
      '/api/agent/interrupts?status=pending&limit=1',
      '/api/agent/interrupts?status=pending&limit=1&cursor=1',
      '/api/agent/interrupts?status=pending&limit=1&cursor=2',
    ])
  })
})

describe('errors', () => {
  it("rebuilds the server's envelope: code, message, details", async () => {
    const envelope = {
      error: { code: 'RESUME_PAYLOAD_INVALID', message: 'bad payload', details: { errors: { int_1: [] } } },
    }
    const server = await serve((_req, res) => sendJson(res, 422, envelope))
    const error = await failure(createDecisionsClient({ baseUrl: server.baseUrl }).decide('t', { resume: [] }))
    expect(error.name).toBe('InterludeError')
    expect(error.code).toBe('RESUME_PAYLOAD_INVALID')
    expect(error.message).toBe('bad payload')
    expect(error.details).toEqual({ errors: { int_1: [] } })
  })

  it('types answers without the envelope, and never takes their text as the message', async () => {
    const answers: [number, string][] = [
      [502, '<html>Bad Gateway</html>'],
      [404, 'Not Found'],
      [400, JSON.stringify({ error: { code: 'NOT_A_CODE', message: 'x' } })],
      [429, '{}'],
    ]
    const server = await serve((_req, res, i) => {
      const [status, body] = answers[i]!
      res.writeHead(status, { 'Content-Type': 'text/html' }).end(body)
    })
    const client = createDecisionsClient({ baseUrl: server.baseUrl })
    const codes = []
    for (const [status] of answers) {
      const error = await failure(client.snapshot('t'))
      expect(error.details).toEqual({ reason: 'no_envelope', status })
      expect(error.message).toBe(`The server answered HTTP ${status} without an error envelope.`)
      codes.push(error.code)
    }
    // The protocol's one status table (http-errors.ts): a proxy's 5xx and a bare 429 may heal with a retry.
    expect(codes).toEqual(['NETWORK_ERROR', 'NOT_FOUND', 'INVALID_INPUT', 'RATE_LIMITED'])
  })

  it('refuses 2xx answers that are not JSON or not the expected shape', async () => {
    const bodies = ['not json', JSON.stringify({ items: 'nope' }), JSON.stringify({ threadId: 't', status: 'weird' })]
    const server = await serve((_req, res, i) => res.writeHead(200).end(bodies[i]))
    const client = createDecisionsClient({ baseUrl: server.baseUrl })
    const first = await failure(client.pending())
    const second = await failure(client.pending())
    const third = await failure(client.run('t', 'r'))
    expect([first.code, second.code, third.code]).toEqual(['PROTOCOL_ERROR', 'PROTOCOL_ERROR', 'PROTOCOL_ERROR'])
    expect([first.details, second.details, third.details]).toEqual([
      { reason: 'invalid_json', status: 200 },
      { reason: 'invalid_answer', status: 200 },
      { reason: 'invalid_answer', status: 200 },
    ])
  })

  it('a refused connection is NETWORK_ERROR, an aborted request ABORTED', async () => {
    const server = await serve(() => undefined) // never answers
    const unreachable = createDecisionsClient({ baseUrl: 'http://127.0.0.1:9/api/agent' })
    const refused = await failure(unreachable.snapshot('t'))
    expect(refused.code).toBe('NETWORK_ERROR')
    expect(refused.message).toBe('The connection failed.')
    const controller = new AbortController()
    const pending = createDecisionsClient({ baseUrl: server.baseUrl }).snapshot('t', { signal: controller.signal })
    await server.requestsReach(1)
    controller.abort()
    expect((await failure(pending)).code).toBe('ABORTED')
  })
})

describe('decide retries', () => {
  it('sends again with the same runId after a lost answer, not after a refusal', async () => {
    const server = await serve((req, res, i) => {
      if (i === 0) res.writeHead(503).end('upstream down')
      else if (i === 1) sendJson(res, 503, { error: { code: 'STORE_UNAVAILABLE', message: 'store' } })
      else if (i === 2) sendJson(res, 202, { threadId: 't', runId: JSON.parse(req.body).runId })
      else sendJson(res, 409, { error: { code: 'DECISION_CONFLICT', message: 'c', details: { runId: 'r' } } })
    })
    const client = createDecisionsClient({ baseUrl: server.baseUrl })
    const accepted = await client.decide('t', { resume: [], backoff: { initialMs: 1, maxMs: 1 } })
    const runIds = server.requests.map((r) => JSON.parse(r.body).runId)
    expect(runIds).toEqual([accepted.runId, accepted.runId, accepted.runId])
    const conflict = await failure(client.decide('t', { resume: [], backoff: { initialMs: 1, maxMs: 1 } }))
    expect(conflict.code).toBe('DECISION_CONFLICT')
    expect(server.requests).toHaveLength(4)
  })

  it('sends again after a 429, with or without the envelope (RATE_LIMITED is retryable)', async () => {
    const server = await serve((req, res, i) => {
      if (i === 0) res.writeHead(429, { 'Content-Type': 'text/plain' }).end('Too Many Requests')
      else if (i === 1) sendJson(res, 429, { error: { code: 'RATE_LIMITED', message: 'Slow down.' } })
      else sendJson(res, 202, { threadId: 't', runId: JSON.parse(req.body).runId })
    })
    const client = createDecisionsClient({ baseUrl: server.baseUrl })
    const accepted = await client.decide('t', { resume: [], backoff: { initialMs: 1, maxMs: 1 } })
    expect(server.requests.map((r) => JSON.parse(r.body).runId)).toEqual(Array(3).fill(accepted.runId))
  })

  it('gives up after `retries`', async () => {
    const server = await serve((_req, res) => res.writeHead(502).end())
    const client = createDecisionsClient({ baseUrl: server.baseUrl })
    const error = await failure(client.decide('t', { resume: [], retries: 1, backoff: { initialMs: 1, maxMs: 1 } }))
    expect(error.code).toBe('NETWORK_ERROR')
    expect(server.requests).toHaveLength(2)
  })
})

describe('waitForRun', () => {
  it('polls until the run is no longer running', async () => {
    const server = await serve((_req, res, i) =>
      sendJson(res, 200, { threadId: 't', runId: 'r', status: i < 2 ? 'running' : 'finished' }),
    )
    const view = await createDecisionsClient({ baseUrl: server.baseUrl }).waitForRun('t', 'r', { pollMs: 1 })
    expect(view.status).toBe('finished')
    expect(server.requests.map((r) => r.url)).toEqual(Array(3).fill('/api/agent/threads/t/runs/r'))
  })

  it('throws ABORTED when the signal aborts between polls', async () => {
    const server = await serve((_req, res) => sendJson(res, 200, { threadId: 't', runId: 'r', status: 'running' }))
    const controller = new AbortController()
    const waiting = createDecisionsClient({ baseUrl: server.baseUrl }).waitForRun('t', 'r', {
      pollMs: 60_000,
      signal: controller.signal,
    })
    await server.requestsReach(1)
    controller.abort()
    expect((await failure(waiting)).code).toBe('ABORTED')
  })
})
