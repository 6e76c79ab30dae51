import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { EventType } from '@interlude/protocol'
import type { AgUiEvent } from '@interlude/protocol'
import { releaseAssistant } from '../demo/release-assistant.ts'
import type { TestServer } from '../test-utils/harness.ts'
import {
  authHeader,
  newThreadId,
  postRun,
  runInput,
  startTestServer,
  textOf,
  types,
  userMessage,
} from '../test-utils/harness.ts'
import type { FakeOpenAI } from '../test-utils/fake-openai.ts'
import { chunk, errorOf, startFakeOpenAI, streamOf } from '../test-utils/fake-openai.ts'
import type { OpenAIModelOptions } from './openai.ts'
import { openaiModel } from './openai.ts'
import { threadKey } from '../store/thread-key.ts'

/**
 * The model boundary under real-world failures (docs/decisions.md#the-model-boundary): stalls, back-off, truncation and typed
 * errors, through the real `openai` client against a local compatible server.
 */
let fake: FakeOpenAI
beforeAll(async () => {
  fake = await startFakeOpenAI()
})
afterAll(async () => {
  await fake.close()
})

let server: TestServer | undefined
afterEach(async () => {
  await server?.dispose()
  server = undefined
  fake.reset()
})

async function serve(options: Partial<OpenAIModelOptions> = {}): Promise<TestServer> {
  server = await startTestServer({
    agent: releaseAssistant({
      model: openaiModel({
        apiKey: 'sk-test-key',
        baseURL: fake.baseURL,
        model: 'fake-model',
        maxRetries: 0,
        ...options,
      }),
    }),
  })
  return server
}

const last = (events: readonly AgUiEvent[]) => events[events.length - 1]!
const roles = (i: number) => (fake.requests[i]!.messages as { role: string }[]).map((m) => m.role)

/** The thread is idle again: new input runs (and the failed answer is not in its history). */
async function expectThreadUsable(s: TestServer, threadId: string, historyRoles: string[]): Promise<void> {
  const n = fake.requests.length
  fake.queue.push(streamOf([chunk({ content: 'ok' }), chunk({}, 'stop')]))
  const again = await postRun(s, runInput(threadId, [userMessage('again')]))
  expect(textOf(again.events)).toBe('ok')
  expect(roles(n)).toEqual(historyRoles)
}

describe('stalled model streams end in a typed timeout and release the thread', () => {
  it('a stream that stalls after its first chunks: idle timeout, the request is aborted', async () => {
    const s = await serve({ idleTimeoutMs: 150 })
    fake.queue.push((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/event-stream' })
      res.write(chunk({ role: 'assistant', content: 'Thinking' }))
      // …and nothing more, connection left open.
    })
    const threadId = newThreadId()
    const aborted = fake.nextAbort()
    const r = await postRun(s, runInput(threadId, [userMessage('hello')]))
    expect(types(r.events)).toEqual([
      EventType.RUN_STARTED,
      EventType.TEXT_MESSAGE_START,
      EventType.TEXT_MESSAGE_CONTENT,
      EventType.TEXT_MESSAGE_END,
      EventType.RUN_ERROR,
    ])
    expect(last(r.events)).toEqual({
      type: EventType.RUN_ERROR,
      code: 'MODEL_ERROR',
      message: 'The model did not answer in time.',
      details: { kind: 'timeout', retryable: true, timeout: 'idle' },
    })
    await aborted
    expect(fake.aborted).toBe(1)
    await expectThreadUsable(s, threadId, ['system', 'user', 'user'])
  })

  it('SSE comments while stalled are not activity', async () => {
    const s = await serve({ idleTimeoutMs: 200 })
    let pings: ReturnType<typeof setInterval> | undefined
    fake.queue.push((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/event-stream' })
      res.write(chunk({ role: 'assistant', content: 'Hm' }))
      pings = setInterval(() => res.write(': keep-alive\n\n'), 20)
      res.on('close', () => clearInterval(pings))
    })
    const r = await postRun(s, runInput(newThreadId(), [userMessage('hello')]))
    clearInterval(pings)
    expect(last(r.events)).toMatchObject({ code: 'MODEL_ERROR', details: { kind: 'timeout', timeout: 'idle' } })
  })

  it('no response headers: the headers bound ends the call', async () => {
    const s = await serve({ timeoutMs: 150 })
    fake.queue.push(() => {
      // Never answers.
    })
    const threadId = newThreadId()
    const r = await postRun(s, runInput(threadId, [userMessage('hello')]))
    expect(types(r.events)).toEqual([EventType.RUN_STARTED, EventType.RUN_ERROR])
    expect(last(r.events)).toMatchObject({
      code: 'MODEL_ERROR',
      details: { kind: 'timeout', retryable: true, timeout: 'headers' },
    })
    await expectThreadUsable(s, threadId, ['system', 'user', 'user'])
  })

  it('a stream that trickles forever: the total bound ends the call', async () => {
    const s = await serve({ idleTimeoutMs: 1000, totalTimeoutMs: 300 })
    let drip: ReturnType<typeof setInterval> | undefined
    fake.queue.push((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/event-stream' })
      drip = setInterval(() => res.write(chunk({ content: '.' })), 20)
      res.on('close', () => clearInterval(drip))
    })
    const r = await postRun(s, runInput(newThreadId(), [userMessage('hello')]))
    clearInterval(drip)
    expect(last(r.events)).toMatchObject({ code: 'MODEL_ERROR', details: { kind: 'timeout', timeout: 'total' } })
  })
})

describe('back-off honours Retry-After, capped, and every wait is abortable', () => {
  /** Resolves when the provider starts its first back-off wait (the response was read). */
  function waiting(): { options: Partial<OpenAIModelOptions>; started: Promise<number> } {
    let resolve!: (delayMs: number) => void
    const started = new Promise<number>((r) => (resolve = r))
    return { options: { onRetry: ({ delayMs }) => resolve(delayMs) }, started }
  }

  it('a cancel during a 25 s Retry-After ends the run cancelled, without another request', async () => {
    // The cap is lifted above the Retry-After so that only an abortable wait ends early; the elapsed
    // bound is loose (a fifth of the wait), not a speed measurement.
    const wait = waiting()
    const s = await serve({ maxRetries: 2, maxRetryDelayMs: 60_000, ...wait.options })
    fake.queue.push(errorOf(429, { error: { message: 'slow down' } }, { 'retry-after': '25' }))
    const threadId = newThreadId()
    const input = runInput(threadId, [userMessage('hello')])
    const run = postRun(s, input)
    expect(await wait.started).toBe(25_000)
    const cancelledAt = Date.now()
    const res = await fetch(`${s.baseUrl}/threads/${threadId}/runs/${input.runId}/cancel`, {
      method: 'POST',
      headers: { ...authHeader('alice'), 'Content-Type': 'application/json' },
      body: '{}',
    })
    expect(res.status).toBe(202)
    const r = await run
    expect(last(r.events)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: 'cancelled' } })
    expect(Date.now() - cancelledAt).toBeLessThan(5_000)
    expect(fake.requests).toHaveLength(1)
  })

  it('a shutdown during the wait ends the run cancelled', async () => {
    const wait = waiting()
    const s = await serve({ maxRetries: 2, maxRetryDelayMs: 60_000, ...wait.options })
    fake.queue.push(errorOf(503, { error: { message: 'busy' } }, { 'retry-after': '25' }))
    const threadId = newThreadId()
    const input = runInput(threadId, [userMessage('hello')])
    const run = postRun(s, input)
    expect(await wait.started).toBe(25_000)
    const closing = Date.now()
    await s.close()
    expect(Date.now() - closing).toBeLessThan(5_000)
    const r = await run
    expect(last(r.events)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: 'cancelled' } })
    expect(fake.requests).toHaveLength(1)
  })

  it('a Retry-After beyond the cap waits only the cap, then retries', async () => {
    const delays: number[] = []
    const s = await serve({ maxRetries: 1, maxRetryDelayMs: 50, onRetry: ({ delayMs }) => delays.push(delayMs) })
    fake.queue.push(errorOf(429, { error: { message: 'slow down' } }, { 'retry-after': '25' }))
    fake.queue.push(streamOf([chunk({ content: 'after the cap' }), chunk({}, 'stop')]))
    const r = await postRun(s, runInput(newThreadId(), [userMessage('hello')]))
    expect(textOf(r.events)).toBe('after the cap')
    expect(delays).toEqual([50])
    expect(fake.requests).toHaveLength(2)
  })
})

describe('typed model errors, without upstream text', () => {
  const SECRET = 'org-4711 key sk-live-secret'
  const cases: {
    name: string
    handlers: () => Parameters<FakeOpenAI['queue']['push']>
    retries?: number
    details: Record<string, unknown>
    requests: number
  }[] = [
    {
      name: '401',
      handlers: () => [errorOf(401, { error: { message: `Incorrect API key ${SECRET}`, code: 'invalid_api_key' } })],
      details: { kind: 'auth', retryable: false, status: 401 },
      requests: 1,
    },
    {
      name: '429 after the retries',
      retries: 2,
      handlers: () =>
        [1, 2, 3].map(() => errorOf(429, { error: { message: `Rate limit ${SECRET}` } }, { 'retry-after-ms': '1' })),
      details: { kind: 'rate_limited', retryable: true, status: 429 },
      requests: 3,
    },
    {
      name: '429 insufficient_quota (not retried)',
      retries: 2,
      handlers: () => [errorOf(429, { error: { message: `Quota ${SECRET}`, code: 'insufficient_quota' } })],
      details: { kind: 'rate_limited', retryable: false, status: 429 },
      requests: 1,
    },
    {
      name: '5xx after the retries',
      retries: 1,
      handlers: () => [1, 2].map(() => errorOf(502, { error: { message: SECRET } }, { 'retry-after-ms': '1' })),
      details: { kind: 'unavailable', retryable: true, status: 502 },
      requests: 2,
    },
    {
      name: 'context_length_exceeded',
      handlers: () => [
        errorOf(400, {
          error: {
            message: `maximum context length ${SECRET}`,
            code: 'context_length_exceeded',
            type: 'invalid_request_error',
          },
        }),
      ],
      details: { kind: 'context_length', retryable: false, status: 400 },
      requests: 1,
    },
    {
      name: 'another 400',
      handlers: () => [errorOf(400, { error: { message: `bad ${SECRET}`, code: 'invalid_value' } })],
      details: { kind: 'bad_request', retryable: false, status: 400 },
      requests: 1,
    },
    {
      name: 'a mid-stream reset',
      handlers: () => [streamOf([chunk({ content: 'Half' })], { drop: true })],
      details: { kind: 'stream_reset', retryable: true },
      requests: 1,
    },
  ]
  for (const c of cases) {
    it(`${c.name} → MODEL_ERROR details ${JSON.stringify(c.details)}`, async () => {
      const s = await serve({ maxRetries: c.retries ?? 0 })
      fake.queue.push(...c.handlers())
      const threadId = newThreadId()
      const r = await postRun(s, runInput(threadId, [userMessage('hello')]))
      const error = last(r.events) as { type: string; code: string; message: string; details: unknown }
      expect(error.type).toBe(EventType.RUN_ERROR)
      expect(error.code).toBe('MODEL_ERROR')
      expect(error.details).toEqual(c.details)
      expect(fake.requests).toHaveLength(c.requests)
      expect(r.raw).not.toMatch(/org-4711|sk-live|sk-test-key|Rate limit|Incorrect|maximum context/)
      // The run record says the same, and the thread takes new input.
      expect(
        await s.store.getRun(threadKey('alice', threadId), (r.events[0] as { runId: string }).runId),
      ).toMatchObject({
        status: 'failed',
        errorCode: 'MODEL_ERROR',
      })
      await expectThreadUsable(s, threadId, ['system', 'user', 'user'])
    })
  }
})

describe('truncated and filtered answers are not success', () => {
  for (const [reason, kind] of [
    ['length', 'truncated'],
    ['content_filter', 'content_filter'],
  ] as const) {
    it(`finish_reason "${reason}" → RUN_ERROR MODEL_ERROR ${kind}; the cut text was streamed but is not history`, async () => {
      const s = await serve()
      fake.queue.push(streamOf([chunk({ role: 'assistant', content: 'The answer is cut he' }), chunk({}, reason)]))
      const threadId = newThreadId()
      const r = await postRun(s, runInput(threadId, [userMessage('hello')]))
      expect(textOf(r.events)).toBe('The answer is cut he')
      expect(types(r.events).slice(-2)).toEqual([EventType.TEXT_MESSAGE_END, EventType.RUN_ERROR])
      expect(last(r.events)).toMatchObject({ code: 'MODEL_ERROR', details: { kind, retryable: false } })
      await expectThreadUsable(s, threadId, ['system', 'user', 'user'])
    })
  }

  it('tool calls cut by the output limit are closed and never recorded or run', async () => {
    const s = await serve()
    fake.queue.push(
      streamOf([
        chunk({
          tool_calls: [
            { index: 0, id: 'call_pub', type: 'function', function: { name: 'publish_release', arguments: '{"ver' } },
          ],
        }),
        chunk({}, 'length'),
      ]),
    )
    const threadId = newThreadId()
    const r = await postRun(s, runInput(threadId, [userMessage('publish')]))
    expect(types(r.events)).toEqual([
      EventType.RUN_STARTED,
      EventType.TOOL_CALL_START,
      EventType.TOOL_CALL_ARGS,
      EventType.TOOL_CALL_END,
      EventType.RUN_ERROR,
    ])
    expect(await s.store.listToolCalls(threadKey('alice', threadId))).toEqual([])
  })
})
