import { describe, expect, it } from 'vitest'
import { EventType } from '@interlude/protocol'
import { threadKey } from '../store/thread-key.ts'
import { until } from '../test-utils/child-server.ts'
import { interruptsOf, newThreadId, resumeInput, runInput, types, userMessage } from '../test-utils/harness.ts'
import type { InProcessOptions, InProcessServer } from '../test-utils/in-process.ts'
import { serversPerTest } from '../test-utils/in-process.ts'
import {
  deploy,
  historyOf,
  holdRun,
  lifecycle,
  multitask,
  outcomeOf,
  post,
  queueStores,
} from '../test-utils/queue-harness.ts'
import { queueModel } from '../test-utils/queue-model.ts'
import { commandAgent } from '../test-utils/test-agents.ts'

/**
 * Input for a busy thread (docs/protocol.md#multitask): `reject` (the default) refuses it, `enqueue` stores it and
 * starts it when the runs before it end, `interrupt` cancels the running run and starts it next. On SQLite and on
 * PostgreSQL, through the real app (`app.request`).
 */
const server = serversPerTest()
const STORES = await queueStores('run queue on PostgreSQL')

describe.each(STORES)('multitask on $name', ({ options }) => {
  async function start(extra: InProcessOptions = {}) {
    const q = queueModel()
    const s = await server({ ...(await options()), agent: commandAgent([deploy], { model: q.model }), ...extra })
    return { s, q }
  }

  /** Starts run A (`hold A`) and waits until its model streams. */
  async function holdA(s: InProcessServer, q: ReturnType<typeof queueModel>, threadId: string) {
    const { input: a, streaming } = await holdRun(s, q, threadId)
    return { a, streaming }
  }

  it('reject is the default: a busy thread answers 409 THREAD_BUSY and nothing is queued', async () => {
    const { s, q } = await start()
    const threadId = newThreadId()
    const { streaming } = await holdA(s, q, threadId)
    const b = runInput(threadId, [userMessage('B')])
    const refused = await s.postRun(b)
    expect(refused.status).toBe(409)
    expect(refused.error?.code).toBe('THREAD_BUSY')
    expect(await s.store.listQueuedInputs?.(threadKey('alice', threadId))).toEqual([])
    q.release('hold A')
    await streaming
    expect(await s.store.getRun(threadKey('alice', threadId), b.runId)).toBeUndefined()
  })

  it('an unknown strategy is INVALID_INPUT and nothing is stored', async () => {
    const { s } = await start()
    const threadId = newThreadId()
    for (const strategy of ['later', 'Steer']) {
      const refused = await s.postRun(runInput(threadId, [userMessage('x')], multitask(strategy)))
      expect(refused.status).toBe(400)
      expect(refused.error?.code).toBe('INVALID_INPUT')
    }
    expect(await s.store.getThread(threadKey('alice', threadId))).toBeUndefined()
  })

  it('enqueue: B and C wait for A and run in order, each after the one before ended', async () => {
    const { s, q } = await start()
    const threadId = newThreadId()
    const { a, streaming } = await holdA(s, q, threadId)
    const b = runInput(threadId, [userMessage('B')], multitask('enqueue'))
    const c = runInput(threadId, [userMessage('C')], multitask('enqueue'))
    expect(await post(s, b)).toEqual({ status: 202, body: { threadId, runId: b.runId, queued: 1 } })
    expect(await post(s, c)).toEqual({ status: 202, body: { threadId, runId: c.runId, queued: 2 } })
    // A retry of the same enqueue answers the same position and queues nothing more.
    expect(await post(s, c)).toEqual({ status: 202, body: { threadId, runId: c.runId, queued: 2 } })
    expect(q.started).toEqual(['hold A'])
    q.release('hold A')
    await streaming
    await until(async () => (await outcomeOf(s, threadId, c.runId)) === 'success', 'C ends')
    expect(await lifecycle(s, threadId)).toEqual([
      `start ${a.runId}`,
      `end ${a.runId}`,
      `start ${b.runId}`,
      `end ${b.runId}`,
      `start ${c.runId}`,
      `end ${c.runId}`,
    ])
    expect(await historyOf(s, threadId)).toEqual([
      'user: hold A',
      'assistant: waiting answer hold A',
      'user: B',
      'assistant: answer B',
      'user: C',
      'assistant: answer C',
    ])
    expect(await s.store.listQueuedInputs?.(threadKey('alice', threadId))).toEqual([])
  })

  it('cancel of queued C while A runs: C never runs, B does, in order', async () => {
    const { s, q } = await start()
    const threadId = newThreadId()
    const { streaming } = await holdA(s, q, threadId)
    const b = runInput(threadId, [userMessage('B')], multitask('enqueue'))
    const c = runInput(threadId, [userMessage('C')], multitask('enqueue'))
    const d = runInput(threadId, [userMessage('D')], multitask('enqueue'))
    for (const input of [b, c, d]) expect((await post(s, input)).status).toBe(202)
    const cancelled = await s.request(`/threads/${threadId}/runs/${c.runId}/cancel`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{}',
    })
    expect(cancelled.status).toBe(200)
    expect(await cancelled.json()).toEqual({ runId: c.runId, status: 'cancelled', queued: true })
    const queue = await s.store.listQueuedInputs!(threadKey('alice', threadId))
    expect(queue.map((entry) => [entry.runId, entry.position])).toEqual([
      [b.runId, 1],
      [d.runId, 2],
    ])
    q.release('hold A')
    await streaming
    await until(async () => (await outcomeOf(s, threadId, d.runId)) === 'success', 'D ends')
    expect(q.started).toEqual(['hold A', 'B', 'D'])
    expect(await s.store.getRun(threadKey('alice', threadId), c.runId)).toBeUndefined()
  })

  it('interrupt: the running run ends cancelled, then the new input runs', async () => {
    const { s, q } = await start()
    const threadId = newThreadId()
    const { a, streaming } = await holdA(s, q, threadId)
    const i = runInput(threadId, [userMessage('I')], multitask('interrupt'))
    expect(await post(s, i)).toEqual({ status: 202, body: { threadId, runId: i.runId, queued: 1 } })
    const stream = await streaming
    expect(types(stream.events).at(-1)).toBe(EventType.RUN_FINISHED)
    await until(async () => (await outcomeOf(s, threadId, i.runId)) === 'success', 'I ends')
    expect(await outcomeOf(s, threadId, a.runId)).toBe('cancelled')
    expect(await lifecycle(s, threadId)).toEqual([
      `start ${a.runId}`,
      `end ${a.runId}`,
      `start ${i.runId}`,
      `end ${i.runId}`,
    ])
  })

  it('a pending batch holds the queue: the continuation runs first, then the queued message', async () => {
    const { s, q } = await start({ multitask: 'enqueue' })
    const threadId = newThreadId()
    const paused = await s.postRun(
      runInput(threadId, [userMessage(JSON.stringify({ toolCalls: [{ name: 'deploy', args: {} }] }))]),
    )
    const [interrupt] = interruptsOf(paused.events)
    expect(interrupt).toBeDefined()
    // The server's default strategy (`multitask: 'enqueue'`) applies to input that names none.
    const b = runInput(threadId, [userMessage('B')])
    expect(await post(s, b)).toEqual({ status: 202, body: { threadId, runId: b.runId, queued: 1 } })
    const thread = await s.store.getThread(threadKey('alice', threadId))
    expect(thread?.status).toBe('interrupted')
    expect((await s.store.getOpenBatch(threadKey('alice', threadId)))?.status).toBe('pending')
    expect(q.started).toHaveLength(1)
    const resume = resumeInput(threadId, [
      { interruptId: interrupt!.id, status: 'resolved', payload: { approved: true } },
    ])
    const resumed = await s.postRun(resume)
    expect(types(resumed.events).at(-1)).toBe(EventType.RUN_FINISHED)
    await until(async () => (await outcomeOf(s, threadId, b.runId)) === 'success', 'B ends')
    const order = await lifecycle(s, threadId)
    expect(order.slice(2)).toEqual([
      `start ${resume.runId}`,
      `end ${resume.runId}`,
      `start ${b.runId}`,
      `end ${b.runId}`,
    ])
  })

  it('queued input counts for the concurrent-runs quota: past it, enqueue is 429 RATE_LIMITED and nothing is queued', async () => {
    const { s, q } = await start({ limits: { maxConcurrentRunsPerPrincipal: 2 } })
    const threadId = newThreadId()
    const { streaming } = await holdA(s, q, threadId)
    const b = runInput(threadId, [userMessage('B')], multitask('enqueue'))
    const c = runInput(threadId, [userMessage('C')], multitask('enqueue'))
    expect((await post(s, b)).status).toBe(202)
    const refused = await s.postRun(c)
    expect(refused.status).toBe(429)
    expect(refused.error?.code).toBe('RATE_LIMITED')
    const queue = await s.store.listQueuedInputs!(threadKey('alice', threadId))
    expect(queue.map((entry) => entry.runId)).toEqual([b.runId])
    q.release('hold A')
    await streaming
    await until(async () => (await outcomeOf(s, threadId, b.runId)) === 'success', 'B ends')
  })
})
