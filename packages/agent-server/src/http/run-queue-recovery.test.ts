import { afterAll, describe, expect, it } from 'vitest'
import { EventType } from '@interlude/protocol'
import type { RunAgentInput } from '@interlude/protocol'
import { createPostgresStore } from '../store/postgres/postgres-store.ts'
import { threadKey } from '../store/thread-key.ts'
import { until } from '../test-utils/child-server.ts'
import { newThreadId, runInput, tempDir, userMessage } from '../test-utils/harness.ts'
import type { InProcessServer } from '../test-utils/in-process.ts'
import { startInProcess } from '../test-utils/in-process.ts'
import { createTestSchema, PG_URL, pgAvailable, TEST_POOLS } from '../test-utils/pg.ts'
import { holdRun, inputWith } from '../test-utils/queue-harness.ts'
import { queueModel } from '../test-utils/queue-model.ts'
import { commandAgent } from '../test-utils/test-agents.ts'

/**
 * The run queue across processes and crashes (docs/decisions.md#a-durable-run-queue): a queued input left behind by a
 * process that died is started by the next one, once; one whose run exists already is not run again; replicas on one
 * PostgreSQL database start each queued input exactly once, in the order of the positions they answered.
 */
const open: InProcessServer[] = []
const cleanups: (() => Promise<void> | void)[] = []
afterAll(async () => {
  for (const s of open.splice(0)) await s.close()
  for (const cleanup of cleanups) await cleanup()
})

const enqueue = (text: string, threadId: string): RunAgentInput =>
  runInput(threadId, [userMessage(text)], { forwardedProps: { interlude: { multitask: 'enqueue' } } })

async function starts(s: InProcessServer, threadId: string): Promise<string[]> {
  const events = await s.store.readEvents(threadKey('alice', threadId), {})
  return events.filter((e) => e.type === EventType.RUN_STARTED).map((e) => e.runId)
}

const ended = async (s: InProcessServer, threadId: string, runId: string) => {
  const run = await s.store.getRun(threadKey('alice', threadId), runId)
  return run !== undefined && run.status !== 'running'
}

/** Processes started one after the other on one SQLite file, with one queue model. */
function restarts() {
  const tmp = tempDir()
  cleanups.push(() => tmp.cleanup())
  const q = queueModel()
  const boot = async () => {
    const s = await startInProcess({ dbPath: tmp.dbPath, agent: commandAgent([], { model: q.model }) })
    open.push(s)
    return s
  }
  return { q, boot }
}

describe('queued input left by a process that died (SQLite, a restart)', () => {
  it('is started by the next process, once; a row whose run exists is only removed', async () => {
    const { q, boot } = restarts()
    const threadId = newThreadId()
    const key = threadKey('alice', threadId)
    const first = await boot()
    expect((await first.postRun(runInput(threadId, [userMessage('A')]))).status).toBe(200)
    // What a process leaves when it dies after queuing B and before starting it (its run had ended).
    const b = enqueue('B', threadId)
    // The row a process writes when it queues B (docs/decisions.md#a-durable-run-queue).
    const leaveQueued = (s: InProcessServer) =>
      s.store.enqueueInput!({
        threadId: key,
        runId: b.runId,
        ownerId: 'alice',
        input: JSON.stringify({ ...b, threadId: key }),
        front: false,
        now: Date.now(),
      })
    await leaveQueued(first)
    await first.close()
    const second = await boot()
    await until(() => ended(second, threadId, b.runId), 'B ends')
    expect(await second.store.listQueuedInputs!(key)).toEqual([])
    // What a process leaves when it dies after starting B and before removing its row.
    await leaveQueued(second)
    await second.close()
    const third = await boot()
    await until(async () => (await third.store.listQueuedInputs!(key)).length === 0, 'the row is removed')
    expect(q.started).toEqual(['A', 'B'])
    expect((await starts(third, threadId)).filter((id) => id === b.runId)).toHaveLength(1)
    const history = await third.store.listMessages(key)
    expect(history.map((m) => `${m.role}: ${String(m.content)}`)).toEqual([
      'user: A',
      'assistant: answer A',
      'user: B',
      'assistant: answer B',
    ])
  })
})

describe('a steer left by a process that died (SQLite, a restart)', () => {
  it('is queued input for the next process: it starts once, as a run of its own', async () => {
    const { q, boot } = restarts()
    const threadId = newThreadId()
    const key = threadKey('alice', threadId)
    const first = await boot()
    const a = runInput(threadId, [userMessage('A')])
    expect((await first.postRun(a)).status).toBe(200)
    // What a process leaves when it accepted a steer for A and died before any run took it (A's end committed).
    const steer = inputWith('steer', 'S', threadId)
    await first.store.enqueueInput!({
      threadId: key,
      runId: steer.runId,
      ownerId: 'alice',
      input: JSON.stringify({ ...steer, threadId: key }),
      front: false,
      steer: true,
      now: Date.now(),
    })
    await first.close()
    const second = await boot()
    await until(() => ended(second, threadId, steer.runId), 'S runs')
    expect(await starts(second, threadId)).toEqual([a.runId, steer.runId])
    expect(q.started.filter((text) => text === 'S')).toHaveLength(1)
    expect(await second.store.listQueuedInputs!(key)).toEqual([])
  })
})

const pg = await pgAvailable('run queue across PostgreSQL replicas')
/** Replicas on one fresh PostgreSQL schema, with one queue model. */
async function replicas() {
  const { schema, drop } = await createTestSchema()
  cleanups.push(drop)
  const q = queueModel()
  const replica = async () => {
    const store = await createPostgresStore({ connectionString: PG_URL, schema, ...TEST_POOLS })
    const s = await startInProcess({ store, exclusive: false, agent: commandAgent([], { model: q.model }) })
    open.push(s)
    return s
  }
  return { q, replica }
}

describe.runIf(pg)('two PostgreSQL replicas', () => {
  it('20 inputs enqueued concurrently across both while a run streams: each runs once, in the order of positions', async () => {
    const { q, replica } = await replicas()
    const servers = [await replica(), await replica()]
    const threadId = newThreadId()
    const a = runInput(threadId, [userMessage('hold A')])
    const streaming = servers[0]!.postRun(a)
    await until(() => q.started.includes('hold A'), 'A streams')
    const inputs = Array.from({ length: 20 }, (_, i) => enqueue(`Q${i}`, threadId))
    const answers = await Promise.all(
      inputs.map(async (input, i) => {
        const response = await servers[i % 2]!.request('/runs', {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify(input),
        })
        expect(response.status).toBe(202)
        return ((await response.json()) as { queued: number }).queued
      }),
    )
    expect([...answers].sort((x, y) => x - y)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1))
    q.release('hold A')
    await streaming
    const byPosition = inputs.map((input, i) => ({ runId: input.runId, position: answers[i]! }))
    byPosition.sort((x, y) => x.position - y.position)
    const last = byPosition.at(-1)!.runId
    await until(() => ended(servers[0]!, threadId, last), 'the last queued run ends', 60_000)
    expect(await starts(servers[0]!, threadId)).toEqual([a.runId, ...byPosition.map((entry) => entry.runId)])
    expect(q.started).toHaveLength(21)
    expect(new Set(q.started).size).toBe(21)
  })

  it('a steer posted to the replica that does not run A joins A there, once, and no new run starts', async () => {
    const { q, replica } = await replicas()
    const [one, two] = [await replica(), await replica()]
    const threadId = newThreadId()
    const { input: a, streaming } = await holdRun(one!, q, threadId)
    const steers = Array.from({ length: 3 }, (_, i) => inputWith('steer', `S${i}`, threadId))
    for (const steer of steers) {
      const answer = await two!.request('/runs', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(steer),
      })
      expect(await answer.json()).toEqual({ threadId, runId: a.runId, steered: true })
    }
    q.release('hold A')
    const stream = await streaming
    // A's own stream on the first replica shows the three messages, once each, in order.
    const joined = stream.events.flatMap((e) =>
      e.type === EventType.TEXT_MESSAGE_START && (e as { role?: string }).role === 'user'
        ? [(e as { messageId: string }).messageId]
        : [],
    )
    expect(joined).toEqual(steers.map((steer) => steer.messages[0]!.id))
    expect(await starts(two!, threadId)).toEqual([a.runId])
    expect(q.started).toEqual(['hold A', 'S2'])
    expect(q.requests[1]!.slice(-3).map((m) => m.content)).toEqual(['S0', 'S1', 'S2'])
  })
})
