import { Writable } from 'node:stream'
import { afterEach, describe, expect, it } from 'vitest'
import type { ToolDefinition } from '../agent/tool.ts'
import {
  authHeader,
  interruptsOf,
  newThreadId,
  resumeInput,
  runInput,
  startTestServer,
  userMessage,
} from '../test-utils/harness.ts'
import type { TestServer } from '../test-utils/harness.ts'
import { serversPerTest } from '../test-utils/in-process.ts'
import type { InProcessServer } from '../test-utils/in-process.ts'
import { commandAgent, gatedModel } from '../test-utils/test-agents.ts'
import { createLogger } from './logger.ts'

/** Operations (docs/decisions.md#operating-it): JSON log lines and Prometheus metrics, read from a real server after real runs. */

const deploy: ToolDefinition = {
  name: 'deploy',
  description: 'deploy',
  parameters: { type: 'object' },
  approval: 'always',
  execute: () => ({ deployed: true }),
}
const pausing = () => userMessage(JSON.stringify({ toolCalls: [{ name: 'deploy', args: {} }] }))

/** Lines written to a logger, each parsed as JSON (a line that is not JSON fails the test). */
function captured(): { lines: () => Record<string, unknown>[]; raw: () => string; stream: Writable } {
  let raw = ''
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      raw += chunk.toString('utf8')
      done()
    },
  })
  return {
    stream,
    raw: () => raw,
    lines: () =>
      raw
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as Record<string, unknown>),
  }
}

/**
 * The Prometheus text exposition format, strictly: `# HELP` / `# TYPE` comments and `name{labels} value` samples.
 * Returns each sample's value by `name{labels}`; throws on any other line. NaN is read case-insensitively, as
 * Prometheus' own parser does (prom-client writes `Nan` for an empty event-loop histogram).
 */
function parsePrometheus(text: string): Map<string, number> {
  const samples = new Map<string, number>()
  const sample =
    /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*",?)*\})? (-?[0-9.e+-]+|[Nn][Aa][Nn]|[+-]Inf)$/
  for (const line of text.split('\n')) {
    if (line === '' || /^# (HELP|TYPE) [a-zA-Z_:][a-zA-Z0-9_:]* .*$/.test(line)) continue
    const match = sample.exec(line)
    if (!match) throw new Error(`not Prometheus text: ${JSON.stringify(line)}`)
    samples.set(`${match[1]}${match[2] ?? ''}`, Number(match[3]))
  }
  return samples
}

/** `GET {base}/metrics` as bob (a metrics principal of the server), parsed. */
async function scrape(s: InProcessServer): Promise<Map<string, number>> {
  const res = await s.request('/metrics', { principal: 'bob' })
  expect(res.status).toBe(200)
  return parsePrometheus(await res.text())
}

/** A sample's value, 0 while absent (a labelled counter has no sample before its first increment). */
const sampleOf = (samples: Map<string, number>, key: string): number => samples.get(key) ?? 0

const server = serversPerTest()
const started: TestServer[] = []
afterEach(async () => {
  for (const s of started.splice(0)) await s.dispose()
})

describe('logs', () => {
  it('are JSON lines with the expected fields: requests, refusals, run start and end', async () => {
    const out = captured()
    const s = await server({
      agent: commandAgent([deploy]),
      logger: createLogger({ level: 'info', destination: out.stream }),
    })
    const threadId = newThreadId()
    const paused = await s.postRun(runInput(threadId, [pausing()]))
    const [interrupt] = interruptsOf(paused.events)
    await s.postRun(
      resumeInput(threadId, [{ interruptId: interrupt!.id, status: 'resolved', payload: { approved: true } }]),
    )
    await s.request('/threads/nope', { principal: 'bob' })
    await s.app.runs.idle()

    const lines = out.lines()
    for (const line of lines) {
      expect(typeof line.time).toBe('string')
      expect(line.level).toMatch(/^(info|warn|error)$/)
      expect(typeof line.event).toBe('string')
      expect(typeof line.msg).toBe('string')
    }
    const events = lines.map((l) => l.event)
    expect(events.filter((e) => e === 'run.started')).toHaveLength(2)
    expect(lines.find((l) => l.event === 'run.finished' && l.outcome === 'interrupt')).toMatchObject({
      threadId,
      interrupts: 1,
    })
    expect(lines.find((l) => l.event === 'run.finished' && l.outcome === 'success')).toMatchObject({ threadId })
    expect(lines.find((l) => l.event === 'request' && l.method === 'POST')).toMatchObject({
      path: '/api/agent/runs',
      status: 200,
      principal: 'alice',
    })
    expect(lines.find((l) => l.event === 'request.refused')).toMatchObject({
      status: 404,
      code: 'THREAD_NOT_FOUND',
      principal: 'bob',
    })
  })

  it('cannot be forged: a %0A in a path stays inside one line', async () => {
    const out = captured()
    const s = await server({ logger: createLogger({ level: 'info', destination: out.stream }) })
    const forged = '%0A%7B%22level%22%3A%22fatal%22%2C%22event%22%3A%22forged%22%7D%0A'
    const res = await s.request(`/no-such-route${forged}`)
    expect(res.status).toBe(404)
    const lines = out.lines()
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatchObject({ event: 'request.refused', status: 404, code: 'NOT_FOUND' })
    // The router decoded the newlines: they are in the value, JSON-escaped, not in the stream.
    expect(String(lines[0]!.path)).toMatch(/^\/api\/agent\/no-such-route\n\{"level"/)
    expect(out.raw().split('\n').filter(Boolean)).toHaveLength(1)
  })
})

describe('metrics', () => {
  it('parse as Prometheus text and move with a real run, interrupt and decision; only for metrics principals', async () => {
    const s = await server({ agent: commandAgent([deploy]), metricsPrincipals: ['bob'] })
    const scrape = async () => {
      const res = await s.request('/metrics', { principal: 'bob' })
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/)
      return parsePrometheus(await res.text())
    }
    const before = await scrape()
    expect(before.get('interlude_runs_started_total')).toBe(0)
    // Anybody else: no such route.
    expect((await s.request('/metrics', { principal: 'alice' })).status).toBe(404)
    expect((await s.request('/metrics', { principal: null })).status).toBe(401)

    const threadId = newThreadId()
    const paused = await s.postRun(runInput(threadId, [pausing()]))
    const [interrupt] = interruptsOf(paused.events)
    await s.app.runs.idle()
    const afterPause = await scrape()
    expect(afterPause.get('interlude_runs_started_total')).toBe(1)
    expect(afterPause.get('interlude_runs_finished_total{outcome="interrupt"}')).toBe(1)
    expect(afterPause.get('interlude_interrupts_opened_total')).toBe(1)

    await s.postRun(
      resumeInput(threadId, [{ interruptId: interrupt!.id, status: 'resolved', payload: { approved: true } }]),
    )
    await s.app.runs.idle()
    s.app.metrics.recordQuotaRefusal('concurrent_runs')
    const after = await scrape()
    expect(after.get('interlude_runs_started_total')).toBe(2)
    expect(after.get('interlude_runs_finished_total{outcome="success"}')).toBe(1)
    expect(after.get('interlude_interrupts_decided_total{via="run"}')).toBe(1)
    expect(after.get('interlude_admission_duration_seconds_count')).toBe(2)
    expect(after.get('interlude_open_streams')).toBe(0)
    expect(after.get('interlude_active_runs')).toBe(0)
    expect(after.get('interlude_quota_refusals_total{reason="concurrent_runs"}')).toBe(1)
    expect(after.get('interlude_refusals_total{code="NOT_FOUND"}')).toBe(1)
  })

  it('a HEAD of a thread’s events answers the headers and opens no stream (nothing left counted or running)', async () => {
    const s = await server({ agent: commandAgent([deploy]), metricsPrincipals: ['bob'] })
    const threadId = newThreadId()
    await s.postRun(runInput(threadId, [pausing()]))
    await s.app.runs.idle()
    for (let i = 0; i < 5; i++) {
      const res = await s.request(`/threads/${threadId}/events`, { method: 'HEAD' })
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/)
    }
    const res = await s.request('/metrics', { principal: 'bob' })
    expect(parsePrometheus(await res.text()).get('interlude_open_streams')).toBe(0)
  })

  it('are served on a port of their own, bound to 127.0.0.1, and nowhere on the API port', async () => {
    const s = await startTestServer({ metricsPort: 0 })
    started.push(s)
    expect(s.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/)
    const res = await fetch(s.metricsUrl!)
    expect(res.status).toBe(200)
    const samples = parsePrometheus(await res.text())
    expect(samples.get('interlude_runs_started_total')).toBe(0)
    expect([...samples.keys()].some((k) => k.startsWith('process_'))).toBe(true)
    expect((await fetch(`${s.baseUrl}/metrics`, { headers: authHeader('alice') })).status).toBe(404)
    expect((await fetch(s.metricsUrl!.replace('/metrics', '/other'))).status).toBe(404)
  })

  it('count interrupts decided by their deadline: a real batch expired by the sweep moves interlude_interrupts_expired_total', async () => {
    const T0 = Date.parse('2032-03-01T09:00:00.000Z')
    const clock = { now: T0 }
    const s = await server({
      agent: commandAgent([deploy]),
      metricsPrincipals: ['bob'],
      now: () => clock.now,
      interruptTtlSeconds: 2,
      // No timer: the sweep runs when the test says so.
      expirySweepMs: 0,
    })
    const threadId = newThreadId()
    const twoCalls = JSON.stringify({
      toolCalls: [
        { name: 'deploy', args: {} },
        { name: 'deploy', args: {} },
      ],
    })
    const paused = await s.postRun(runInput(threadId, [userMessage(twoCalls)]))
    const interrupts = interruptsOf(paused.events)
    expect(interrupts).toHaveLength(2)
    await s.app.runs.idle()
    const before = await scrape(s)
    expect(sampleOf(before, 'interlude_interrupts_opened_total')).toBe(2)
    expect(sampleOf(before, 'interlude_interrupts_expired_total')).toBe(0)

    // Not due yet: nothing expires, nothing is counted.
    clock.now = T0 + 1999
    expect(await s.app.expirySweeper.sweepOnce()).toBe(0)
    expect(sampleOf(await scrape(s), 'interlude_interrupts_expired_total')).toBe(0)

    clock.now = T0 + 2000
    expect(await s.app.expirySweeper.sweepOnce()).toBe(1)
    await s.app.runs.idle()
    const after = await scrape(s)
    // One batch of two interrupts: both are counted, once, as expired, and not as decided by a person.
    expect(
      sampleOf(after, 'interlude_interrupts_expired_total') - sampleOf(before, 'interlude_interrupts_expired_total'),
    ).toBe(2)
    expect(sampleOf(after, 'interlude_interrupts_decided_total{via="run"}')).toBe(0)
    expect(sampleOf(after, 'interlude_interrupts_decided_total{via="api"}')).toBe(0)
    // The continuation the deadline started ran to the end.
    expect(sampleOf(after, 'interlude_runs_started_total')).toBe(2)
    expect(sampleOf(after, 'interlude_runs_finished_total{outcome="success"}')).toBe(1)

    // A second sweep finds nothing left: the counter does not move again.
    expect(await s.app.expirySweeper.sweepOnce()).toBe(0)
    expect(sampleOf(await scrape(s), 'interlude_interrupts_expired_total')).toBe(2)
  })

  it('count real quota refusals: runs beyond maxConcurrentRunsPerPrincipal are 429 RATE_LIMITED and counted by reason and code', async () => {
    const gate = gatedModel()
    const s = await server({
      agent: { model: gate.model, tools: [], initialState: () => ({}) },
      metricsPrincipals: ['bob'],
      limits: { maxConcurrentRunsPerPrincipal: 1 },
    })
    const before = await scrape(s)
    // Alice's first run holds her only slot until the model is released.
    const first = s.postRun(runInput(newThreadId(), [userMessage('hold')]))
    const refusals = 3
    try {
      await gate.started
      for (let i = 0; i < refusals; i++) {
        const refused = await s.postRun(runInput(newThreadId(), [userMessage(`refused ${i}`)]))
        expect(refused.status).toBe(429)
        expect(refused.headers.get('retry-after')).toBe('2')
        expect(refused.error).toMatchObject({ code: 'RATE_LIMITED', details: { quota: 'concurrentRuns', limit: 1 } })
      }
      const during = await scrape(s)
      const delta = (key: string) => sampleOf(during, key) - sampleOf(before, key)
      expect(delta('interlude_quota_refusals_total{reason="concurrentRuns"}')).toBe(refusals)
      expect(delta('interlude_refusals_total{code="RATE_LIMITED"}')).toBe(refusals)
      // No other quota was counted, and no refused request started a run.
      const reasons = [...during.keys()].filter((k) => k.startsWith('interlude_quota_refusals_total{'))
      expect(reasons).toEqual(['interlude_quota_refusals_total{reason="concurrentRuns"}'])
      expect(sampleOf(during, 'interlude_runs_started_total')).toBe(1)
    } finally {
      // Also when an assertion failed: the held run ends, so the server closes at once.
      gate.release()
    }
    expect((await first).status).toBe(200)
    await s.app.runs.idle()
    // The slot is free again: the next run is admitted and nothing more is counted.
    expect((await s.postRun(runInput(newThreadId(), [userMessage('after')]))).status).toBe(200)
    const after = await scrape(s)
    expect(sampleOf(after, 'interlude_quota_refusals_total{reason="concurrentRuns"}')).toBe(refusals)
    expect(sampleOf(after, 'interlude_refusals_total{code="RATE_LIMITED"}')).toBe(refusals)
  })

  it('count real rate-limit refusals: a burst beyond maxRequestsPerSecond is counted once per 429', async () => {
    const s = await server({ metricsPrincipals: ['bob'], limits: { maxRequestsPerSecond: 5 } })
    const before = await scrape(s)
    const burst = await Promise.all(Array.from({ length: 30 }, () => s.request('/threads', { principal: 'alice' })))
    const refused = burst.filter((r) => r.status === 429)
    // Five points per second: even a burst that straddles a second boundary is refused at least 20 times.
    expect(refused.length).toBeGreaterThanOrEqual(20)
    for (const r of burst) expect([200, 429]).toContain(r.status)
    for (const r of refused)
      expect(await r.json()).toMatchObject({
        error: { code: 'RATE_LIMITED', details: { quota: 'requestsPerSecond', limit: 5 } },
      })
    const after = await scrape(s)
    const delta = (key: string) => sampleOf(after, key) - sampleOf(before, key)
    expect(delta('interlude_quota_refusals_total{reason="requestsPerSecond"}')).toBe(refused.length)
    expect(delta('interlude_refusals_total{code="RATE_LIMITED"}')).toBe(refused.length)
  })
})
