import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { SYSTEM_EXPIRY_PRINCIPAL } from '@interlude/protocol'
import { ValidatorCache } from '../../schema/validator-cache.ts'
import { conformanceKit } from '../../store/conformance/kit.ts'
import { createSqliteStore } from '../../store/sqlite/sqlite-store.ts'
import type { Store } from '../../store/store.ts'
import { tempDir } from '../../test-utils/harness.ts'
import { until } from '../../test-utils/child-server.ts'
import type { ExpirySweeperOptions } from './expiry-sweeper.ts'
import { ExpirySweeper } from './expiry-sweeper.ts'
import type { RunPlan } from '../run-plan.ts'

/**
 * The sweep against a real SQLite store with a stand-in run manager (plans are recorded, not executed): busy
 * threads, lost claims, store errors, pages, the timer. The HTTP behaviour is in `src/http/expiry.test.ts`.
 */
const tmp = tempDir()
afterAll(() => tmp.cleanup())
let files = 0
const kit = conformanceKit(async () => {
  const store = createSqliteStore(path.join(tmp.dir, `sweep-${++files}.db`))
  return { store, connect: async () => store, dispose: () => store.close() }
})
const { now, withDb, paused, ids, start, finish, call, batchFor } = kit
const due = now + 1000

function sweeper(store: Store, extra: Partial<ExpirySweeperOptions> = {}) {
  const started: RunPlan[] = []
  const logged: string[] = []
  const instance = new ExpirySweeper({
    store,
    runs: {
      start: (plan) => void started.push(plan),
      lease: () => ({ executorId: 'exec-t', leaseUntil: due + 60_000 }),
      whenDone: () => Promise.resolve(),
      hold: () => undefined,
    },
    validators: new ValidatorCache(),
    now: () => due,
    logError: (message) => void logged.push(message),
    sweepMs: 0,
    ...extra,
  })
  return { instance, started, logged }
}

/** Forwards to `store`, except the methods given. */
function overriding(store: Store, methods: { [K in keyof Store]?: Store[K] | undefined }): Store {
  return new Proxy(store, {
    get(target, prop) {
      if (prop in methods) return methods[prop as keyof Store]
      const value: unknown = Reflect.get(target, prop, target)
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value
    },
  })
}

describe('ExpirySweeper', () => {
  it('decides a due batch once, as system:expiry via expiry, under run_expiry_<batchId>, and starts its continuation', () =>
    withDb(async (store) => {
      const { threadId, batchId } = await paused(store)
      const { instance, started } = sweeper(store)
      expect(await instance.sweepOnce()).toBe(1)
      expect(await instance.sweepOnce()).toBe(0)
      const runId = `run_expiry_${batchId}`
      expect(started).toMatchObject([
        {
          kind: 'resume',
          threadId,
          runId,
          principal: 'alice',
          expired: true,
          allCancelled: false,
          clientTools: [],
          decision: [{ status: 'resolved', payload: { approved: false, reason: 'expired' } }],
        },
      ])
      expect(await store.listDecisions(threadId)).toMatchObject([
        { runId, decidedBy: SYSTEM_EXPIRY_PRINCIPAL, via: 'expiry' },
      ])
    }))

  it('skips a busy thread (its run still finishing) and decides it in a later round', () =>
    withDb(async (store) => {
      const { threadId, runId } = ids()
      await start(store, threadId, runId)
      await store.insertToolCalls([call(threadId, runId, 'c1', 'awaiting_decision')])
      await store.createBatch(batchFor(threadId, runId, 'b-busy'))
      const { instance, started } = sweeper(store)
      expect(await instance.sweepOnce()).toBe(0)
      expect(await instance.expire((await store.getOpenBatch(threadId))!)).toEqual({
        kind: 'busy',
        activeRunId: runId,
      })
      await finish(store, threadId, runId, { status: 'interrupted', outcome: { type: 'interrupt', interrupts: [] } })
      expect(await instance.sweepOnce()).toBe(1)
      expect(started).toHaveLength(1)
    }))

  it('a claim lost to a person is skipped silently; a kept or undue batch is not touched', () =>
    withDb(async (store) => {
      const { threadId, batchId } = await paused(store)
      const batch = (await store.getOpenBatch(threadId))!
      const claim = await store.claimBatch({
        threadId,
        batchId,
        runId: 'r-person',
        decisionHash: 'h',
        decision: [],
        now,
        ...kit.lease,
        decidedBy: 'alice',
        via: 'run',
      })
      expect(claim.ok).toBe(true)
      const { instance, started, logged } = sweeper(store)
      // While the person's run holds the thread the batch is not the sweep's business; after it, the claim is lost.
      expect(await instance.expire(batch)).toEqual({ kind: 'busy', activeRunId: 'r-person' })
      await finish(store, threadId, 'r-person', { closeBatch: { batchId, status: 'resolved' } })
      expect(await instance.expire(batch)).toEqual({ kind: 'lost', runId: 'r-person' })
      expect(started).toEqual([])
      expect(logged).toEqual([])
      expect(await store.listDecisions(threadId)).toMatchObject([{ decidedBy: 'alice' }])

      const kept = await paused(store, { batch: { onExpiry: 'keep' } })
      expect(await instance.expire((await store.getOpenBatch(kept.threadId))!)).toEqual({ kind: 'skipped' })
      const early = sweeper(store, { now: () => due - 1 }).instance
      const fresh = await paused(store)
      expect(await early.expire((await store.getOpenBatch(fresh.threadId))!)).toEqual({ kind: 'skipped' })
    }))

  it('logs store errors and never throws; the round goes on with the next batch', () =>
    withDb(async (store) => {
      const first = await paused(store)
      const second = await paused(store)
      let failures = 1
      // A store without claimBatches: the sweep claims one by one.
      const flaky = overriding(store, {
        claimBatches: undefined,
        claimBatch: async (request) => {
          if (failures-- > 0) throw new Error('claim failed')
          return store.claimBatch(request)
        },
      })
      const { instance, logged } = sweeper(flaky)
      expect(await instance.sweepOnce()).toBe(1)
      expect(logged).toHaveLength(1)
      expect(logged[0]).toMatch(/^expiry of batch b-/)
      const decided = [first, second].map(async (p) => (await store.listDecisions(p.threadId)).length)
      expect((await Promise.all(decided)).sort()).toEqual([0, 1])
      // The failed one is still due and decided in the next round.
      expect(await instance.sweepOnce()).toBe(1)

      // With claimBatches a failed transaction leaves the whole page due for the next round.
      const third = await paused(store)
      const fourth = await paused(store)
      let bulkFailures = 1
      const bulk = sweeper(
        overriding(store, {
          claimBatches: async (requests) => {
            if (bulkFailures-- > 0) throw new Error('transaction failed')
            return store.claimBatches!(requests)
          },
        }),
      )
      expect(await bulk.instance.sweepOnce()).toBe(0)
      expect(bulk.logged).toEqual(['expiry sweep: could not claim 2 due batches'])
      expect(await bulk.instance.sweepOnce()).toBe(2)
      for (const p of [third, fourth]) expect(await store.listDecisions(p.threadId)).toHaveLength(1)

      const down = sweeper(
        overriding(store, {
          listDueBatches: async () => {
            throw new Error('store down')
          },
        }),
      )
      expect(await down.instance.sweepOnce()).toBe(0)
      expect(down.logged).toEqual(['expiry sweep: could not list due batches'])
    }))

  it('reads due batches page by page; a busy head does not stop the round', () =>
    withDb(async (store) => {
      const busy = ids()
      await start(store, busy.threadId, busy.runId)
      await store.insertToolCalls([call(busy.threadId, busy.runId, 'c1', 'awaiting_decision')])
      // The earliest deadline of all, on a thread whose run has not finished.
      await store.createBatch({ ...batchFor(busy.threadId, busy.runId, 'b-0-busy'), expiresAt: now + 10 })
      for (let i = 0; i < 5; i++) await paused(store)
      const { instance, started } = sweeper(store, { pageSize: 2 })
      expect(await instance.sweepOnce()).toBe(5)
      expect(started).toHaveLength(5)
      expect((await store.getOpenBatch(busy.threadId))?.status).toBe('pending')
    }))

  it('sweeps by itself every sweepMs once started, and stop() waits for the round in progress', () =>
    withDb(async (store) => {
      const { threadId } = await paused(store)
      const { instance, started } = sweeper(store, { sweepMs: 10 })
      instance.start()
      await until(() => started.length === 1, 'the periodic sweep')
      await instance.stop()
      expect(await store.listDecisions(threadId)).toHaveLength(1)
    }))

  it('refuses a bad interval or page size', () => {
    const store = {} as Store
    expect(() => sweeper(store, { sweepMs: -1 })).toThrow(/expirySweepMs must be 0 or a positive number/)
    expect(() => sweeper(store, { sweepMs: Number.NaN })).toThrow(RangeError)
    expect(() => sweeper(store, { pageSize: 0 })).toThrow(/pageSize/)
  })
})
