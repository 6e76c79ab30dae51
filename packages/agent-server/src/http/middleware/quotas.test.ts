import { afterEach, describe, expect, it } from 'vitest'
import type { QuotaRefusal } from './quotas.ts'
import type { TestServer } from '../../test-utils/harness.ts'
import { authHeader, newThreadId, runInput, startTestServer, userMessage } from '../../test-utils/harness.ts'
import type { TOKENS } from '../../test-utils/harness.ts'

// Quotas (docs/decisions.md#operating-it): without them, one principal got 2,000 concurrent runs accepted and held 4,000 streams. Each quota is driven
// past its limit by one principal (alice) on a real server; the refusals are typed, and bob is served meanwhile.

let server: TestServer | undefined
afterEach(async () => {
  await server?.dispose()
  server = undefined
})

type Principal = keyof typeof TOKENS

/** POST /runs; an admitted stream is cancelled at once (the run goes on in the server), a refusal is read. */
async function startRun(principal: Principal, threadId = newThreadId()) {
  const response = await fetch(`${server!.baseUrl}/runs`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream', ...authHeader(principal) },
    body: JSON.stringify(runInput(threadId, [userMessage('deploy v2')])),
  })
  if (response.status === 200) {
    await response.body?.cancel()
    return { status: 200, threadId, retryAfter: null, error: undefined }
  }
  const body = (await response.json()) as { error: { code: string; details?: { quota?: string } } }
  return { status: response.status, threadId, retryAfter: response.headers.get('retry-after'), error: body.error }
}

function runningRunsOf(owner: string): number {
  const db = (server!.store as unknown as { database: { prepare(sql: string): { get(o: string): { n: number } } } })
    .database
  return db.prepare("SELECT COUNT(*) AS n FROM threads WHERE owner_id = ? AND status = 'running'").get(owner).n
}

function threadsOf(owner: string): number {
  const db = (server!.store as unknown as { database: { prepare(sql: string): { get(o: string): { n: number } } } })
    .database
  return db.prepare('SELECT COUNT(*) AS n FROM threads WHERE owner_id = ?').get(owner).n
}

describe('per-principal quotas (429 RATE_LIMITED with Retry-After)', () => {
  it('300 concurrent runs by one principal: at most maxConcurrentRunsPerPrincipal admitted, the rest refused, bob runs', async () => {
    const refusals: QuotaRefusal[] = []
    // Slow runs (1 s per token) outlast the burst, so every admitted run is still running when the last is refused.
    server = await startTestServer({
      pacingMs: 1000,
      // 300 sockets from one address: the per-address connection cap is not what this test is about.
      limits: { maxConcurrentRunsPerPrincipal: 5, maxConnectionsPerIp: 0 },
      onQuotaRefused: (refusal) => refusals.push(refusal),
    })
    const answers = await Promise.all(Array.from({ length: 300 }, () => startRun('alice')))
    const admitted = answers.filter((a) => a.status === 200)
    const refused = answers.filter((a) => a.status !== 200)
    expect(admitted.length).toBeGreaterThanOrEqual(1)
    expect(admitted.length).toBeLessThanOrEqual(5)
    expect(runningRunsOf('alice')).toBeLessThanOrEqual(5)
    for (const r of refused) {
      expect(r.status).toBe(429)
      expect(r.error).toMatchObject({ code: 'RATE_LIMITED', details: { quota: 'concurrentRuns', limit: 5 } })
      expect(Number(r.retryAfter)).toBeGreaterThanOrEqual(1)
    }
    // A refusal wrote nothing: alice owns exactly the admitted threads.
    expect(threadsOf('alice')).toBe(admitted.length)
    expect(refusals.filter((r) => r.quota === 'concurrentRuns' && r.principal === 'alice')).toHaveLength(refused.length)
    // Another principal is unaffected.
    expect((await startRun('bob')).status).toBe(200)
  })

  it('a retry of an admitted runId is not charged again (it joins the run)', async () => {
    server = await startTestServer({ pacingMs: 1000, limits: { maxConcurrentRunsPerPrincipal: 1 } })
    const input = runInput(newThreadId(), [userMessage('deploy v2')])
    const post = () =>
      fetch(`${server!.baseUrl}/runs`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', ...authHeader('alice') },
        body: JSON.stringify(input),
      })
    const first = await post()
    expect(first.status).toBe(200)
    await first.body?.cancel()
    const retry = await post()
    expect(retry.status).toBe(200)
    await retry.body?.cancel()
    expect((await startRun('alice')).error).toMatchObject({ code: 'RATE_LIMITED' })
  })

  it('open streams: beyond maxOpenStreamsPerPrincipal a stream is refused before anything happens; closing one frees it', async () => {
    server = await startTestServer({ limits: { maxOpenStreamsPerPrincipal: 3 } })
    const threadId = newThreadId()
    const done = await fetch(`${server.baseUrl}/runs`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...authHeader('alice') },
      body: JSON.stringify(runInput(threadId, [userMessage('hello')])),
    })
    await done.text()
    const follow = (principal: Principal, signal?: AbortSignal) =>
      fetch(`${server!.baseUrl}/threads/${threadId}/events?follow=1`, {
        headers: authHeader(principal),
        ...(signal ? { signal } : {}),
      })
    const aborts = [new AbortController(), new AbortController(), new AbortController()]
    const held = await Promise.all(aborts.map((a) => follow('alice', a.signal)))
    for (const h of held) expect(h.status).toBe(200)
    const fourth = await follow('alice')
    expect(fourth.status).toBe(429)
    expect(await fourth.json()).toMatchObject({ error: { code: 'RATE_LIMITED', details: { quota: 'openStreams' } } })
    // A new run is a stream too: refused before admission, so no thread is created.
    const run = await startRun('alice')
    expect(run.error).toMatchObject({ code: 'RATE_LIMITED', details: { quota: 'openStreams' } })
    expect(threadsOf('alice')).toBe(1)
    // Bob's own streams are counted apart (bob cannot read alice's thread: his stream is a run of his own).
    expect((await startRun('bob')).status).toBe(200)
    // The client goes away: the slot frees (bounded wait for the server to see the close).
    aborts[0]!.abort()
    let again: Response | undefined
    for (let i = 0; i < 100; i++) {
      again = await follow('alice')
      if (again.status === 200) break
      await again.body?.cancel()
      await new Promise((r) => setTimeout(r, 50))
    }
    expect(again?.status).toBe(200)
    await again?.body?.cancel()
    for (const a of aborts) a.abort()
  })

  it('new threads per minute: the bucket refuses the next new thread, runs on existing threads are not charged', async () => {
    server = await startTestServer({ limits: { maxNewThreadsPerMinute: 3 } })
    const created: string[] = []
    for (let i = 0; i < 3; i++) {
      const threadId = newThreadId()
      const response = await fetch(`${server.baseUrl}/runs`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', ...authHeader('alice') },
        body: JSON.stringify(runInput(threadId, [userMessage('hello')])),
      })
      expect(response.status).toBe(200)
      await response.text()
      created.push(threadId)
    }
    const fourth = await startRun('alice')
    expect(fourth.status).toBe(429)
    expect(fourth.error).toMatchObject({ code: 'RATE_LIMITED', details: { quota: 'newThreadsPerMinute', limit: 3 } })
    expect(Number(fourth.retryAfter)).toBeGreaterThan(1)
    expect(threadsOf('alice')).toBe(3)
    // The next message on an existing thread is not a new thread.
    const more = await fetch(`${server.baseUrl}/runs`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...authHeader('alice') },
      body: JSON.stringify(runInput(created[0]!, [userMessage('hello again')])),
    })
    expect(more.status).toBe(200)
    await more.text()
    expect((await startRun('bob')).status).toBe(200)
  })

  it('requests per second: a burst beyond the bucket is refused with Retry-After; bob is served', async () => {
    server = await startTestServer({ limits: { maxRequestsPerSecond: 5 } })
    const get = (principal: Principal) => fetch(`${server!.baseUrl}/threads`, { headers: authHeader(principal) })
    const burst = await Promise.all(Array.from({ length: 40 }, () => get('alice')))
    const statuses = burst.map((r) => r.status)
    expect(statuses.filter((s) => s === 200).length).toBeLessThanOrEqual(10)
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(30)
    const refused = burst.find((r) => r.status === 429)!
    expect(refused.headers.get('retry-after')).toBe('1')
    expect(await refused.json()).toMatchObject({
      error: { code: 'RATE_LIMITED', details: { quota: 'requestsPerSecond', limit: 5 } },
    })
    expect((await get('bob')).status).toBe(200)
  })

  it('refuses bad quota settings when the server is created', async () => {
    await expect(startTestServer({ limits: { maxRequestsPerSecond: -1 } })).rejects.toThrow(/maxRequestsPerSecond/)
    await expect(startTestServer({ limits: { maxConnections: 1.5 } })).rejects.toThrow(/maxConnections/)
  })
})
