import { afterAll, describe, expect, it } from 'vitest'
import { EventType } from '@interlude/protocol'
import type { RunAgentInput } from '@interlude/protocol'
import { createPostgresStore } from '../store/postgres/postgres-store.ts'
import { threadKey } from '../store/thread-key.ts'
import { until } from '../test-utils/child-server.ts'
import { newThreadId, runInput, tempDir, userMessage } from '../test-utils/harness.ts'
import type { InProcessServer } from '../test-utils/in-process.ts'
import { startInProcess } from '../test-utils/in-process.ts'
import { createTestSchema, PG_URL, pgAvailable } from '../test-utils/pg.ts'
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

describe('queued input left by a process that died (SQLite, a restart)', () => {
  it('is started by the next process, once; a row whose run exists is only removed', async () => {
    const tmp = tempDir()
    cleanups.push(() => tmp.cleanup())
    const q = queueModel()
    const boot = async () => {
      const s = await startInProcess({ dbPath: tmp.dbPath, agent: commandAgent([], { model: q.model }) })
      open.push(s)
      return s
    }
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

const pg = await pgAvailable('run queue across PostgreSQL replicas')
describe.runIf(pg)('two PostgreSQL replicas', () => {
  it('20 inputs enqueued concurrently across both while a run streams: each runs once, in the order of positions', async () => {
    const { schema, drop } = await createTestSchema()
    cleanups.push(drop)
    const q = queueModel()
    const replica = async () => {
      const store = await createPostgresStore({ connectionString: PG_URL, schema })
      const s = await startInProcess({ store, exclusive: false, agent: commandAgent([], { model: q.model }) })
      open.push(s)
      return s
    }
    const replicas = [await replica(), await replica()]
    const threadId = newThreadId()
    const a = runInput(threadId, [userMessage('hold A')])
    const streaming = replicas[0]!.postRun(a)
    await until(() => q.started.includes('hold A'), 'A streams')
    const inputs = Array.from({ length: 20 }, (_, i) => enqueue(`Q${i}`, threadId))
    const answers = await Promise.all(
      inputs.map(async (input, i) => {
        const response = await replicas[i % 2]!.request('/runs', {
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
    await until(() => ended(replicas[0]!, threadId, last), 'the last queued run ends', 60_000)
    expect(await starts(replicas[0]!, threadId)).toEqual([a.runId, ...byPosition.map((entry) => entry.runId)])
    expect(q.started).toHaveLength(21)
    expect(new Set(q.started).size).toBe(21)
  })
})
