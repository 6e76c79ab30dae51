import { expect, it } from 'vitest'
import type { ConformanceKit } from './kit.ts'

/** Reads across threads (lists, log heads) and server settings. */
export function readCases(kit: ConformanceKit): void {
  const { withDb, ids, start, finish, batchFor, call, now } = kit

  it('lists the owner’s threads newest first with keyset pages; the inbox filter needs an unexpired batch', () =>
    withDb(async (store) => {
      const made: string[] = []
      for (let i = 0; i < 4; i++) {
        const { threadId, runId } = ids()
        await start(store, threadId, runId, null, { now: now + i * 10 })
        await store.insertToolCalls([call(threadId, runId, 'c1', 'awaiting_decision')])
        await store.createBatch({
          ...batchFor(threadId, runId, `b-${threadId}`),
          createdAt: now + i * 10,
          expiresAt: now + 100 + i * 1000,
        })
        await finish(store, threadId, runId, {
          status: 'interrupted',
          outcome: { type: 'interrupt', interrupts: [] },
          now: now + i * 10,
        })
        made.push(threadId)
      }
      const idle = ids()
      await start(store, idle.threadId, idle.runId, null, { now: now + 100 })
      await finish(store, idle.threadId, idle.runId, { now: now + 100 })
      const bobs = ids()
      await start(store, bobs.threadId, bobs.runId, null, { ownerId: 'bob' })

      const all = await store.listThreads('alice', { limit: 10 })
      expect(all.map((t) => t.threadId)).toEqual([idle.threadId, ...[...made].reverse()])
      const interrupted = await store.listThreads('alice', { status: 'interrupted', limit: 10 })
      expect(interrupted.map((t) => t.threadId)).toEqual([...made].reverse())
      const page1 = await store.listThreads('alice', { status: 'interrupted', limit: 2 })
      const last = page1[page1.length - 1]!
      const page2 = await store.listThreads('alice', {
        status: 'interrupted',
        limit: 2,
        after: { updatedAt: last.updatedAt, threadId: last.threadId },
      })
      expect([...page1, ...page2].map((t) => t.threadId)).toEqual([...made].reverse())
      // At now + 1500 only the batches of threads 2 and 3 are still open (expiresAt now+2100, now+3100).
      const pending = await store.listThreads('alice', {
        status: 'interrupted',
        limit: 10,
        pendingInterruptsAt: now + 1500,
      })
      expect(pending.map((t) => t.threadId)).toEqual([made[3], made[2]])
      expect((await store.listThreads('bob', { limit: 10 })).map((t) => t.threadId)).toEqual([bobs.threadId])
      expect(await store.listThreads('carol', { limit: 10 })).toEqual([])
    }))

  it('the inbox filter keeps a batch kept past its deadline (onExpiry keep), not a deny/cancel one', () =>
    withDb(async (store) => {
      const made: string[] = []
      for (const onExpiry of ['keep', 'deny', 'cancel'] as const) {
        const { threadId, runId } = ids()
        await start(store, threadId, runId)
        await store.insertToolCalls([call(threadId, runId, 'c1', 'awaiting_decision')])
        await store.createBatch({ ...batchFor(threadId, runId, `b-${threadId}`), onExpiry })
        await finish(store, threadId, runId, { status: 'interrupted', outcome: { type: 'interrupt', interrupts: [] } })
        made.push(threadId)
      }
      const late = await store.listThreads('alice', {
        status: 'interrupted',
        limit: 10,
        pendingInterruptsAt: now + 5000,
      })
      expect(late.map((t) => t.threadId)).toEqual([made[0]])
    }))

  it('polls log heads of many threads in one call', () =>
    withDb(async (store) => {
      const a = ids()
      const b = ids()
      await start(store, a.threadId, a.runId)
      await start(store, b.threadId, b.runId)
      await store.appendEvents(a.threadId, a.runId, [
        { type: 'X', json: '{}' },
        { type: 'X', json: '{}' },
      ])
      await finish(store, b.threadId, b.runId)
      const heads = await store.pollThreads([a.threadId, b.threadId, 'missing'])
      expect(heads.sort((x, y) => x.threadId.localeCompare(y.threadId))).toEqual(
        [
          { threadId: a.threadId, lastSeq: 2, activeRunId: a.runId },
          { threadId: b.threadId, lastSeq: 1, activeRunId: undefined },
        ].sort((x, y) => x.threadId.localeCompare(y.threadId)),
      )
      expect(await store.pollThreads([])).toEqual([])
    }))

  it('keeps one setting value once created, also across connections', () =>
    withDb(async (store, db) => {
      const other = await db.connect()
      const values = await Promise.all([
        store.getOrCreateSetting('k', () => 'v1'),
        other.getOrCreateSetting('k', () => 'v2'),
      ])
      expect(values[0]).toBe(values[1])
      expect(await store.getOrCreateSetting('k', () => 'v3')).toBe(values[0])
      await store.ping()
      await other.ping()
    }))
}
