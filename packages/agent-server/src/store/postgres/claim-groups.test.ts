import { describe, expect, it } from 'vitest'
import type { ClaimBatchRequest, ClaimBatchResult, Store } from '../store.ts'
import { conformanceKit } from '../conformance/kit.ts'
import { countingPool, createTestSchema, PG_URL, pgAvailable } from '../../test-utils/pg.ts'
import { ClaimGroups } from './claim-groups.ts'
import { createPostgresStore } from './postgres-store.ts'

const available = await pgAvailable('PostgreSQL claim groups')

/**
 * Group commit of claims (`claim-groups.ts`): claims that arrive while a claim statement is in flight go out together
 * as one statement, and each must be decided exactly as a lone `claimBatch` would decide it.
 */
const kit = conformanceKit(async () => {
  const { schema, drop } = await createTestSchema()
  const store = await createPostgresStore({ connectionString: PG_URL, schema, max: 4 })
  return {
    store,
    connect: () => Promise.reject(new Error('one store')),
    dispose: async () => {
      await store.close()
      await drop()
    },
  }
})
const { withDb, paused, claimer, now } = kit

/** `ClaimGroups` on the store's own pool, one statement in flight, counting the statements it sends. */
function groupsOf(store: Store) {
  const { q, sent, failGroup } = countingPool(store)
  return { groups: new ClaimGroups(q, 1), sent, failGroup }
}

const claim = (p: { threadId: string; batchId: string }, runId: string, extra: Partial<ClaimBatchRequest> = {}) => ({
  threadId: p.threadId,
  batchId: p.batchId,
  runId,
  decisionHash: `h-${runId}`,
  decision: [{ interruptId: `${p.batchId}-i1`, status: 'resolved' as const, payload: { approved: true } }],
  now,
  ...claimer,
  ...extra,
})

const outcome = (r: ClaimBatchResult) => (r.ok ? `ok:${r.thread.activeRunId}` : r.reason)

describe.skipIf(!available)('PostgreSQL claim groups', () => {
  it('30 claims at once: one alone, the rest in one statement; each thread, run and decision record written', () =>
    withDb(async (store) => {
      const threads = await Promise.all(Array.from({ length: 30 }, () => paused(store)))
      const { groups, sent } = groupsOf(store)
      const results = await Promise.all(threads.map((t, i) => groups.claim(claim(t, `x${i}`))))
      expect(results.map(outcome)).toEqual(threads.map((_, i) => `ok:x${i}`))
      expect(sent).toEqual(['one', 'group'])
      for (const [i, t] of threads.entries()) {
        expect(await store.getThread(t.threadId)).toMatchObject({ status: 'running', activeRunId: `x${i}` })
        expect(await store.getRun(t.threadId, `x${i}`)).toMatchObject({ kind: 'resume', batchId: t.batchId })
        expect(await store.listDecisions(t.threadId)).toMatchObject([
          { runId: `x${i}`, interruptIds: [`${t.batchId}-i1`], decidedBy: claimer.decidedBy, via: 'run' },
        ])
        expect(await store.getOpenBatch(t.threadId)).toBeUndefined()
      }
    }))

  it('in one group, refused claims get the reasons a lone claim gets and change nothing; the others are admitted', () =>
    withDb(async (store) => {
      const [a, b, d, e] = await Promise.all([paused(store), paused(store), paused(store), paused(store)])
      // c: a batch opened while its run still holds the thread (busy).
      const { threadId: cThread, runId: cRun } = kit.ids()
      await kit.start(store, cThread, cRun)
      await store.createBatch(kit.batchFor(cThread, cRun, `b-${cThread}`))
      const c = { threadId: cThread, batchId: `b-${cThread}` }
      // b was decided before; d names a batch its thread does not have.
      expect((await store.claimBatch(claim(b, 'earlier'))).ok).toBe(true)
      const { groups, sent } = groupsOf(store)
      const warm = groups.claim(claim(a, 'warm'))
      const results = await Promise.all([
        groups.claim(claim(b, 'late')),
        groups.claim(claim(c, 'x-c')),
        groups.claim(claim(d, 'x-d', { batchId: 'no-such-batch' })),
        groups.claim(claim(e, 'x-e')),
      ])
      expect(outcome(await warm)).toBe('ok:warm')
      // The group, then one read that explains the refused claims.
      expect(sent).toEqual(['one', 'group', 'one'])
      expect(results.map(outcome)).toEqual(['already_claimed', 'busy', 'not_pending', 'ok:x-e'])
      expect(results[0]).toEqual({
        ok: false,
        reason: 'already_claimed',
        claimedByRunId: 'earlier',
        decisionHash: 'h-earlier',
      })
      // The same answers as lone claims.
      expect(await store.claimBatch(claim(b, 'late'))).toEqual(results[0])
      expect(await store.claimBatch(claim(c, 'x-c'))).toEqual(results[1])
      expect(await store.claimBatch(claim(d, 'x-d', { batchId: 'no-such-batch' }))).toEqual(results[2])
      for (const [t, runId] of [
        [b, 'late'],
        [c, 'x-c'],
        [d, 'x-d'],
      ] as const) {
        expect(await store.getRun(t.threadId, runId)).toBeUndefined()
        expect(await store.getDecision(t.threadId, runId)).toBeUndefined()
      }
      expect(await store.getThread(c.threadId)).toMatchObject({ activeRunId: cRun })
      expect((await store.getOpenBatch(c.threadId))?.batchId).toBe(c.batchId)
      expect((await store.getOpenBatch(d.threadId))?.batchId).toBe(d.batchId)
    }))

  it('two claims of one thread never share a statement: exactly one is admitted, the other learns who won', () =>
    withDb(async (store) => {
      const [a, b] = await Promise.all([paused(store), paused(store)])
      const { groups } = groupsOf(store)
      const warm = groups.claim(claim(b, 'warm'))
      const results = await Promise.all([groups.claim(claim(a, 'first')), groups.claim(claim(a, 'second'))])
      expect((await warm).ok).toBe(true)
      expect(results.map(outcome)).toEqual(['ok:first', 'already_claimed'])
      expect(results[1]).toMatchObject({ claimedByRunId: 'first', decisionHash: 'h-first' })
      expect(await store.listDecisions(a.threadId)).toHaveLength(1)
    }))

  it('a taken run id fails the group statement: every claim is then decided on its own, nothing half-written', () =>
    withDb(async (store) => {
      const [a, b, c] = await Promise.all([paused(store), paused(store), paused(store)])
      const { groups, sent } = groupsOf(store)
      const warm = groups.claim(claim(a, 'warm'))
      const results = await Promise.all([
        groups.claim(claim(b, 'x-b')),
        // The run that raised c's batch: its insert violates the runs' key.
        groups.claim(claim(c, c.runId)),
      ])
      expect((await warm).ok).toBe(true)
      expect(sent.slice(0, 2)).toEqual(['one', 'group'])
      expect(results.map(outcome)).toEqual(['ok:x-b', 'run_exists'])
      expect(await store.getThread(c.threadId)).toMatchObject({ status: 'interrupted', activeRunId: undefined })
      expect((await store.getOpenBatch(c.threadId))?.batchId).toBe(c.batchId)
      expect(await store.listDecisions(c.threadId)).toEqual([])
    }))

  it('webhook rows are written with the admitted claims of a group only, in order', () =>
    withDb(async (store) => {
      const [a, b, c] = await Promise.all([paused(store), paused(store), paused(store)])
      expect((await store.claimBatch(claim(c, 'earlier'))).ok).toBe(true)
      const delivery = (id: string) => ({
        deliveryId: id,
        endpoint: 'https://hooks.example/a',
        eventType: 'interrupt.decided',
        payload: `{"id":"${id}"}`,
      })
      const { groups } = groupsOf(store)
      const warm = groups.claim(claim(a, 'warm'))
      await Promise.all([
        groups.claim(claim(b, 'x-b', { outbox: [delivery('d-b1'), delivery('d-b2')] })),
        groups.claim(claim(c, 'x-c', { outbox: [delivery('d-c1')] })),
      ])
      expect((await warm).ok).toBe(true)
      const rows = await store.listOutbox({})
      expect(rows.map((r) => r.deliveryId)).toEqual(['d-b1', 'd-b2'])
    }))

  it('a deadlock of the group statement: each claim is decided on its own, one after the other', () =>
    withDb(async (store) => {
      const threads = await Promise.all(Array.from({ length: 4 }, () => paused(store)))
      const { groups, sent, failGroup } = groupsOf(store)
      failGroup(Object.assign(new Error('deadlock detected'), { code: '40P01' }))
      const warm = groups.claim(claim(threads[0]!, 'warm'))
      const results = await Promise.all(threads.slice(1).map((t, i) => groups.claim(claim(t, `d${i}`))))
      expect((await warm).ok).toBe(true)
      expect(results.map(outcome)).toEqual(['ok:d0', 'ok:d1', 'ok:d2'])
      expect(sent).toEqual(['one', 'group', 'one', 'one', 'one'])
    }))

  it('a failed connection fails the claims of its statement only; their threads can be claimed again after', () =>
    withDb(async (store) => {
      const threads = await Promise.all(Array.from({ length: 4 }, () => paused(store)))
      const { groups, failGroup } = groupsOf(store)
      failGroup(new Error('Connection terminated unexpectedly'))
      const warm = groups.claim(claim(threads[0]!, 'warm'))
      const failed = await Promise.allSettled(threads.slice(1).map((t, i) => groups.claim(claim(t, `f${i}`))))
      expect((await warm).ok).toBe(true)
      expect(failed.map((r) => (r.status === 'rejected' ? (r.reason as Error).message : 'ok'))).toEqual(
        Array(3).fill('Connection terminated unexpectedly'),
      )
      for (const t of threads.slice(1)) expect((await store.getOpenBatch(t.threadId))?.batchId).toBe(t.batchId)
      // Nothing stays held: the same threads are claimed (grouped again) once the database answers.
      const again = await Promise.all([
        groups.claim(claim(threads[1]!, 'g0')),
        groups.claim(claim(threads[2]!, 'g1')),
        groups.claim(claim(threads[3]!, 'g2')),
      ])
      expect(again.map(outcome)).toEqual(['ok:g0', 'ok:g1', 'ok:g2'])
    }))

  it('a claim or take concurrency that is not a positive integer is refused when the store is created', async () => {
    const { schema, drop } = await createTestSchema()
    try {
      for (const claimConcurrency of [0, -1, 1.5, Number.NaN]) {
        await expect(createPostgresStore({ connectionString: PG_URL, schema, claimConcurrency })).rejects.toThrow(
          'claimConcurrency must be a positive integer.',
        )
      }
      for (const takeConcurrency of [0, -1, 1.5, Number.NaN]) {
        await expect(createPostgresStore({ connectionString: PG_URL, schema, takeConcurrency })).rejects.toThrow(
          'takeConcurrency must be a positive integer.',
        )
      }
    } finally {
      await drop()
    }
  })
})
