import fs from 'node:fs'
import path from 'node:path'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { EventType } from '@interlude/protocol'
import type { RunAgentInput } from '@interlude/protocol'
import { createPostgresStore } from '../store/postgres/postgres-store.ts'
import { threadKey } from '../store/thread-key.ts'
import type { ChildServer } from '../test-utils/child-server.ts'
import { CRASH_SERVER, killChildren, launchChild, until } from '../test-utils/child-server.ts'
import { authHeader, newThreadId, runInput, tempDir, userMessage } from '../test-utils/harness.ts'
import { createTestSchema, PG_URL, pgAvailable, TEST_POOL_ARGS, TEST_POOLS } from '../test-utils/pg.ts'
import { inputWith } from '../test-utils/queue-harness.ts'
import { tailSse } from '../test-utils/sse-tail.ts'

/**
 * kill -9 of the replica whose run the queue waits for (docs/decisions.md#a-durable-run-queue): two CLI replicas of the
 * crash fixture on one PostgreSQL schema; inputs queued on both while the run on the first blocks; the first is
 * SIGKILLed. The survivor takes the run over once its lease ends, and every queued input then runs exactly once, in
 * the order of the positions answered.
 */
const tmp = tempDir()
afterEach(() => killChildren())
afterAll(() => tmp.cleanup())
const pg = await pgAvailable('run queue under kill -9 on PostgreSQL')

const post = (server: ChildServer, input: RunAgentInput) =>
  fetch(`${server.baseUrl}/runs`, {
    method: 'POST',
    headers: { ...authHeader('alice'), 'Content-Type': 'application/json', Accept: 'text/event-stream' },
    body: JSON.stringify(input),
  })

describe.runIf(pg)('the run queue when a replica dies (PostgreSQL, two CLI replicas)', () => {
  it('kill -9 of the replica running the run ahead of the queue: the rest still run once each, in order', async () => {
    const { schema, drop } = await createTestSchema()
    const dir = path.join(tmp.dir, 'queue-kill9')
    fs.mkdirSync(dir, { recursive: true })
    const args = ['--db', PG_URL, ...TEST_POOL_ARGS, '--db-schema', schema, '--dir', dir, '--pacing-ms', '1']
    const launch = () => launchChild(CRASH_SERVER, [...args, '--run-lease-ms', '600', '--poll-ms', '50'])
    // One after the other: the first creates the tables.
    const first = await launch()
    const second = await launch()
    const store = await createPostgresStore({ connectionString: PG_URL, schema, ...TEST_POOLS })
    try {
      const threadId = newThreadId()
      const key = threadKey('alice', threadId)
      const a = runInput(threadId, [userMessage('please block here')])
      const running = tailSse(await post(first, a))
      await until(() => fs.existsSync(path.join(dir, 'text-started')), 'A streams on the first replica')
      const inputs = Array.from({ length: 6 }, (_, i) => inputWith('enqueue', `queued ${i}`, threadId))
      const positions = await Promise.all(
        inputs.map(async (input, i) => {
          const response = await post(i % 2 === 0 ? first : second, input)
          expect(response.status).toBe(202)
          return ((await response.json()) as { queued: number }).queued
        }),
      )
      expect([...positions].sort((x, y) => x - y)).toEqual([1, 2, 3, 4, 5, 6])
      await first.kill()
      await until(() => running.ended(), "A's stream breaks with its process")
      fs.writeFileSync(path.join(dir, 'text-release'), '1')
      const order = inputs.map((input, i) => ({ runId: input.runId, position: positions[i]! }))
      order.sort((x, y) => x.position - y.position)
      const ended = async (runId: string) => {
        const run = await store.getRun(key, runId)
        return run !== undefined && run.status !== 'running'
      }
      await until(async () => (await Promise.all(order.map((o) => ended(o.runId)))).every(Boolean), 'all ran', 60_000)
      const starts = (await store.readEvents(key, {}))
        .filter((e) => e.type === EventType.RUN_STARTED)
        .map((e) => e.runId)
      // A's continuation on the survivor goes on in A's log (no second RUN_STARTED); each queued input starts once.
      expect(starts).toEqual([a.runId, ...order.map((o) => o.runId)])
      for (const { runId } of order) expect((await store.getRun(key, runId))?.status).toBe('succeeded')
      expect(await store.listQueuedInputs!(key)).toEqual([])
      await second.stop()
    } finally {
      await store.close()
      await drop()
    }
  }, 120_000)
})
