import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Interrupt } from '@interlude/protocol'
import type { ReleaseState } from '../demo/release-assistant.ts'
import { createPostgresStore } from '../store/postgres/postgres-store.ts'
import { createSqliteStore } from '../store/sqlite/sqlite-store.ts'
import type { Store } from '../store/store.ts'
import {
  interruptsOf,
  lastState,
  newThreadId,
  resumeInput,
  runInput,
  tempDir,
  userMessage,
} from '../test-utils/harness.ts'
import type { InProcessServer } from '../test-utils/in-process.ts'
import { startInProcess } from '../test-utils/in-process.ts'
import { createTestSchema, PG_URL, pgAvailable } from '../test-utils/pg.ts'
import { refusedUnchanged, resolved } from '../test-utils/resume-entries.ts'

/**
 * A resume of a batch this process opened (or read) is admitted with the claim alone (src/core/open-batch-cache.ts):
 * no admission read. What is counted here is the store's `getAdmissionView` — the read that path skips. Every
 * answer must be the one the full admission gives, also when the memory is stale (another replica moved on).
 */

/** The store with its admission reads counted. */
function counted(store: Store): { store: Store; views: () => number } {
  let views = 0
  const proxy = new Proxy(store, {
    get(target, key) {
      const value = Reflect.get(target, key, target) as unknown
      if (typeof value !== 'function') return value
      const bound = (value as (...args: unknown[]) => unknown).bind(target)
      return key === 'getAdmissionView'
        ? (...args: unknown[]) => {
            views += 1
            return bound(...args)
          }
        : bound
    },
  })
  return { store: proxy, views: () => views }
}

async function paused(server: InProcessServer, threadId = newThreadId(), text = 'deploy v5 to production') {
  const first = await server.postRun(runInput(threadId, [userMessage(text)]))
  const [publish, deploy] = interruptsOf(first.events) as [Interrupt, Interrupt]
  expect(deploy).toBeDefined()
  return { threadId, publish, deploy }
}

describe('resume admission from memory (SQLite, one process)', () => {
  let server: InProcessServer
  let views: () => number
  let cleanup: () => void
  beforeAll(async () => {
    const tmp = tempDir()
    cleanup = tmp.cleanup
    const c = counted(await createSqliteStore(tmp.dbPath))
    views = c.views
    server = await startInProcess({ store: c.store })
  })
  afterAll(async () => {
    await server.close()
    cleanup()
  })

  it('a batch this server opened is admitted without the admission read; the retry of its runId replays', async () => {
    const { threadId, publish, deploy } = await paused(server)
    const input = resumeInput(threadId, [resolved(publish), resolved(deploy)])
    const before = views()
    const first = await server.postRun(input)
    expect(first.status).toBe(200)
    expect(views() - before).toBe(0)
    expect(first.events.at(-1)?.type).toBe('RUN_FINISHED')
    expect((lastState(first.events) as ReleaseState).deployments).toHaveLength(1)
    // Nothing is remembered of a claimed batch: the retry reads, and gets the same run's events.
    const retry = await server.postRun(input)
    expect(views() - before).toBe(1)
    expect(retry.events).toEqual(first.events)
  })

  it('an invalid answer is refused as by a fresh read and changes nothing; the corrected one is admitted from memory', async () => {
    const { threadId, publish, deploy } = await paused(server)
    const bad = resumeInput(threadId, [resolved(publish, { approved: 'yes' }), resolved(deploy)])
    const refused = await server.postRun(bad)
    expect(refused.status).toBe(422)
    expect(refused.error?.code).toBe('RESUME_PAYLOAD_INVALID')
    const before = views()
    const good = await server.postRun(resumeInput(threadId, [resolved(publish), resolved(deploy)]))
    expect(good.status).toBe(200)
    expect(views() - before).toBe(0)
    expect((lastState(good.events) as ReleaseState).releases).toHaveLength(1)
  })

  it('a principal who may not decide gets THREAD_NOT_FOUND from memory as from a read; the owner is then admitted', async () => {
    const { threadId, publish, deploy } = await paused(server)
    const input = resumeInput(threadId, [resolved(publish), resolved(deploy)])
    const stranger = await server.postRun(input, { principal: 'bob', owner: 'alice' })
    expect([stranger.status, stranger.error?.code]).toEqual([404, 'THREAD_NOT_FOUND'])
    const before = views()
    const owner = await server.postRun(input)
    expect(owner.status).toBe(200)
    expect(views() - before).toBe(0)
  })

  it('10 identical and 10 conflicting concurrent resumes of a remembered batch: one decision, one execution', async () => {
    const { threadId, publish, deploy } = await paused(server)
    const same = resumeInput(threadId, [resolved(publish), resolved(deploy)])
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        server.postRun(
          i % 2 === 0 ? same : resumeInput(threadId, [resolved(publish), resolved(deploy, { approved: false })]),
        ),
      ),
    )
    const winners = answers.filter((a) => a.status === 200)
    const decisions = new Set(winners.map((a) => (a.events[0] as { runId: string }).runId))
    expect(decisions.size).toBe(1)
    for (const a of answers.filter((x) => x.status !== 200)) {
      expect([409]).toContain(a.status)
      expect(['DECISION_CONFLICT', 'ALREADY_RESUMED']).toContain(a.error?.code)
    }
    const state = lastState(winners[0]!.events) as ReleaseState
    expect(state.releases).toHaveLength(1)
    expect(state.deployments.length).toBeLessThanOrEqual(1)
  })

  it('a refusal from memory writes nothing (the SQLite file is unchanged)', async () => {
    const tmp = tempDir()
    const own = await startInProcess({ dbPath: tmp.dbPath })
    try {
      const { threadId, publish, deploy } = await paused(own)
      const refused = await refusedUnchanged(tmp.dbPath, () =>
        own.postRun(resumeInput(threadId, [resolved(publish), resolved(deploy, { approved: 'no' })])),
      )
      expect(refused.error?.code).toBe('RESUME_PAYLOAD_INVALID')
      // Only one of the two answered: the coverage check, the same code as without memory.
      const partial = await refusedUnchanged(tmp.dbPath, () => own.postRun(resumeInput(threadId, [resolved(publish)])))
      expect(partial.status).toBe(422)
    } finally {
      await own.close()
      tmp.cleanup()
    }
  })
})

const available = await pgAvailable('resume admission from memory across PostgreSQL replicas')

describe.skipIf(!available)('resume admission from memory, two PostgreSQL replicas (stale memory)', () => {
  let a: InProcessServer
  let b: InProcessServer
  let viewsA: () => number
  let drop: () => Promise<void>
  beforeAll(async () => {
    const schema = await createTestSchema()
    drop = schema.drop
    const c = counted(await createPostgresStore({ connectionString: PG_URL, schema: schema.schema }))
    viewsA = c.views
    a = await startInProcess({ store: c.store, heartbeatMs: 50 })
    b = await startInProcess({
      store: await createPostgresStore({ connectionString: PG_URL, schema: schema.schema }),
      heartbeatMs: 50,
    })
  })
  afterAll(async () => {
    await a?.close()
    await b?.close()
    await drop?.()
  })

  it('A opened the batch, B admitted it: A answers the same decision and a different one as B would', async () => {
    const { threadId, publish, deploy } = await paused(a)
    const admitted = await b.postRun(resumeInput(threadId, [resolved(publish), resolved(deploy)]))
    expect(admitted.status).toBe(200)
    const winner = (admitted.events[0] as { runId: string }).runId
    const same = resumeInput(threadId, [resolved(publish), resolved(deploy)])
    const other = resumeInput(threadId, [resolved(publish), resolved(deploy, { approved: false })])
    const before = viewsA()
    const [sameOnA, otherOnA] = [await a.postRun(same), await a.postRun(other)]
    // A's memory was stale: its claim was refused and the decision judged again from a fresh read.
    expect(viewsA() - before).toBe(2)
    const [sameOnB, otherOnB] = [await b.postRun(same), await b.postRun(other)]
    expect([sameOnA.status, sameOnA.error?.code, sameOnA.error?.details]).toEqual([
      409,
      'ALREADY_RESUMED',
      { runId: winner },
    ])
    expect([otherOnA.status, otherOnA.error?.code]).toEqual([409, 'DECISION_CONFLICT'])
    expect(sameOnA.error).toEqual(sameOnB.error)
    expect(otherOnA.error).toEqual(otherOnB.error)
  })

  it('the thread paused again on B: A, remembering the old batch, admits the new one exactly once', async () => {
    const first = await paused(a)
    const { threadId } = first
    expect((await b.postRun(resumeInput(threadId, [resolved(first.publish), resolved(first.deploy)]))).status).toBe(200)
    const second = await b.postRun(runInput(threadId, [userMessage('deploy v6 to staging')]))
    const [publish, deploy] = interruptsOf(second.events) as [Interrupt, Interrupt]
    const input = resumeInput(threadId, [resolved(publish), resolved(deploy)])
    const [onA, onB] = await Promise.all([a.postRun(input), b.postRun(input)])
    expect([onA.status, onB.status]).toEqual([200, 200])
    expect(onA.events).toEqual(onB.events)
    const state = lastState(onA.events) as ReleaseState
    expect(state.deployments.map((d) => d.version)).toEqual(['v5', 'v6'])
  })
})
