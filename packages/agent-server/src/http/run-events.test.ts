import { describe, expect, it } from 'vitest'
import { EventType } from '@interlude/protocol'
import { ThreadSnapshotSchema } from '@interlude/protocol/schemas'
import type { AgUiEvent } from '@interlude/protocol'
import { until } from '../test-utils/child-server.ts'
import { newThreadId } from '../test-utils/harness.ts'
import type { InProcessServer } from '../test-utils/in-process.ts'
import { serversPerTest } from '../test-utils/in-process.ts'
import { holdRun, inputWith, outcomeOf, post, queueStores } from '../test-utils/queue-harness.ts'
import { queueModel } from '../test-utils/queue-model.ts'
import { tailSse } from '../test-utils/sse-tail.ts'
import type { SseTail } from '../test-utils/sse-tail.ts'
import { commandAgent } from '../test-utils/test-agents.ts'

/**
 * Watching queued runs (docs/protocol.md#multitask): a follower of the thread sees each queued run after the one
 * before it, and a queued run's own stream can be attached by its runId before it starts. SQLite and PostgreSQL.
 */
const server = serversPerTest()
const STORES = await queueStores('queued run streams on PostgreSQL')

/** `start <runId>` / `end <runId>` for each RUN_STARTED and RUN_FINISHED a stream carried, in order. */
function runsOf(frames: SseTail['frames']): string[] {
  let current = ''
  const out: string[] = []
  for (const { event } of frames) {
    if (event.type === EventType.RUN_STARTED) current = (event as AgUiEvent & { runId: string }).runId
    if (event.type === EventType.RUN_STARTED || event.type === EventType.RUN_FINISHED)
      out.push(`${event.type === EventType.RUN_STARTED ? 'start' : 'end'} ${current}`)
  }
  return out
}

const open = async (s: InProcessServer, path: string, principal: 'alice' | 'bob' = 'alice') =>
  s.request(path, { principal })

describe.each(STORES)('queued runs on $name', ({ options }) => {
  async function start() {
    const q = queueModel()
    const s = await server({ ...(await options()), agent: commandAgent([], { model: q.model }) })
    return { s, q }
  }

  it('a follower sees B from RUN_STARTED to RUN_FINISHED after A when B was queued', async () => {
    const { s, q } = await start()
    const threadId = newThreadId()
    const { input: a, streaming } = await holdRun(s, q, threadId)
    const follower = tailSse(await open(s, `/threads/${threadId}/events?follow=1`))
    const b = inputWith('enqueue', 'B', threadId)
    expect((await post(s, b)).status).toBe(202)
    q.release('hold A')
    await streaming
    await follower.waitFor((t) => runsOf(t.frames).includes(`end ${b.runId}`), 'the follower sees B end')
    expect(runsOf(follower.frames)).toEqual([
      `start ${a.runId}`,
      `end ${a.runId}`,
      `start ${b.runId}`,
      `end ${b.runId}`,
    ])
    const ids = follower.frames.map((f) => f.id)
    expect(ids).toEqual([...ids].sort((x, y) => x - y))
    expect(new Set(ids).size).toBe(ids.length)
    await follower.cancel()
  })

  it("a queued run's own stream, attached by its runId: it waits while queued, then carries that run alone", async () => {
    const { s, q } = await start()
    const threadId = newThreadId()
    const { streaming } = await holdRun(s, q, threadId)
    const b = inputWith('enqueue', 'B', threadId)
    expect((await post(s, b)).status).toBe(202)
    const attached = await open(s, `/threads/${threadId}/runs/${b.runId}/events`)
    expect(attached.status).toBe(200)
    const tail = tailSse(attached)
    q.release('hold A')
    await streaming
    await tail.waitFor((t) => t.ended(), 'the stream of B ends')
    expect(runsOf(tail.frames)).toEqual([`start ${b.runId}`, `end ${b.runId}`])
    expect(tail.frames.at(-1)?.event.type).toBe(EventType.RUN_FINISHED)
    const text = tail.frames.flatMap(({ event }) =>
      event.type === EventType.TEXT_MESSAGE_CONTENT ? [(event as AgUiEvent & { delta: string }).delta] : [],
    )
    expect(text.join('')).toBe('answer B')
    // Attached again after it ended, from a cursor: only what follows it.
    const again = tailSse(
      await s.request(`/threads/${threadId}/runs/${b.runId}/events`, {
        headers: { 'Last-Event-ID': String(tail.frames[0]!.id) },
      }),
    )
    await again.waitFor((t) => t.ended(), 'the replay ends')
    expect(again.frames.map((f) => f.id)).toEqual(tail.frames.slice(1).map((f) => f.id))
  })

  it('an unknown run, or another principal, is 404; a queued run cancelled while attached ends its stream', async () => {
    const { s, q } = await start()
    const threadId = newThreadId()
    const { streaming } = await holdRun(s, q, threadId)
    const unknown = await open(s, `/threads/${threadId}/runs/run_nope/events`)
    expect(unknown.status).toBe(404)
    expect(((await unknown.json()) as { error: { code: string } }).error.code).toBe('RUN_NOT_FOUND')
    const c = inputWith('enqueue', 'C', threadId)
    expect((await post(s, c)).status).toBe(202)
    const foreign = await open(s, `/threads/${threadId}/runs/${c.runId}/events`, 'bob')
    expect(foreign.status).toBe(404)
    const tail = tailSse(await open(s, `/threads/${threadId}/runs/${c.runId}/events`))
    const cancelled = await s.request(`/threads/${threadId}/runs/${c.runId}/cancel`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{}',
    })
    expect(cancelled.status).toBe(200)
    await tail.waitFor((t) => t.ended(), 'the stream of the cancelled input ends')
    expect(tail.frames).toEqual([])
    q.release('hold A')
    await streaming
  })

  it('the snapshot lists the queue, next first: queued input and steers no run took yet', async () => {
    const { s, q } = await start()
    const threadId = newThreadId()
    const { streaming } = await holdRun(s, q, threadId)
    const b = inputWith('enqueue', 'B', threadId)
    const steer = inputWith('steer', 'S', threadId)
    for (const input of [b, steer]) expect((await post(s, input)).status).toBe(202)
    const snapshot = async () => ThreadSnapshotSchema.parse(await (await open(s, `/threads/${threadId}`)).json())
    expect((await snapshot()).queued).toEqual([
      { runId: b.runId, position: 1, steer: false, message: b.messages[0] },
      { runId: steer.runId, position: 2, steer: true, message: steer.messages[0] },
    ])
    q.release('hold A')
    await streaming
    await until(async () => (await outcomeOf(s, threadId, b.runId)) === 'success', 'B ends')
    expect((await snapshot()).queued).toBeUndefined()
  })
})
