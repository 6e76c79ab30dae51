import { expect, it } from 'vitest'
import { SYSTEM_EXPIRY_PRINCIPAL } from '@interlude/protocol'
import type { ResumeEntry } from '@interlude/protocol'
import type { ClaimBatchRequest, NewBatch, PendingBatchRecord, Store } from '../store.ts'
import type { ConformanceKit } from './kit.ts'

/**
 * Approvals from anywhere (docs/approvals.md): the decision record a claim writes, the thread title,
 * the expiry policy, the cross-owner inbox and the expiry sweep's due batches.
 */
export function approvalCases(kit: ConformanceKit): void {
  const { withDb, ids, start, finish, interrupt, paused, now, claimer, growth } = kit

  const claimOf =
    (store: Store, threadId: string, batchId: string) =>
    (runId: string, extra: Partial<ClaimBatchRequest> = {}) =>
      store.claimBatch({ threadId, batchId, runId, decisionHash: 'h', decision: [], now, ...claimer, ...extra })

  /** A batch of two interrupts whose batch order is not their id order. */
  const twoInterrupts = (batchId: string): Pick<NewBatch, 'interrupts'> => ({
    interrupts: [
      { interrupt: interrupt(`${batchId}-z`, 'c2'), kind: 'approval', toolCallId: 'c2', toolName: 'deploy' },
      { interrupt: interrupt(`${batchId}-a`, 'c1'), kind: 'input', toolCallId: 'c1', toolName: 'ask' },
    ],
  })

  it('a won claim writes its decision record in the same transaction; a refused claim writes none', () =>
    withDb(async (store) => {
      const { threadId, runId } = ids()
      const batchId = `b-${threadId}`
      await start(store, threadId, runId)
      await store.createBatch({ ...kit.batchFor(threadId, runId, batchId), ...twoInterrupts(batchId) })
      const claim = claimOf(store, threadId, batchId)
      expect(await claim('r-busy')).toEqual({ ok: false, reason: 'busy' })
      await finish(store, threadId, runId, { status: 'interrupted', outcome: { type: 'interrupt', interrupts: [] } })
      expect(await claim(runId)).toEqual({ ok: false, reason: 'run_exists' })
      expect(await claimOf(store, threadId, 'no-such-batch')('r-none')).toEqual({ ok: false, reason: 'not_pending' })
      expect(await store.listDecisions(threadId)).toEqual([])

      const entries: ResumeEntry[] = [
        { interruptId: `${batchId}-a`, status: 'resolved', payload: { answer: 42 } },
        { interruptId: `${batchId}-z`, status: 'cancelled' },
      ]
      const won = await claim('r-win', { decision: entries, decidedBy: 'mgr', via: 'api', now: now + 5 })
      expect(won.ok).toBe(true)
      const record = {
        threadId,
        runId: 'r-win',
        // The batch's public id: the run that paused with it (docs/time-travel.md).
        batchId: runId,
        interruptIds: [`${batchId}-z`, `${batchId}-a`],
        entries,
        decidedBy: 'mgr',
        via: 'api',
        at: new Date(now + 5).toISOString(),
      }
      expect(await store.getDecision(threadId, 'r-win')).toEqual(record)

      // A later, conflicting claim is refused and rewrites nothing.
      const late = await claim('r-late', { decision: [], decidedBy: 'eve', via: 'run', now: now + 9 })
      expect(late).toMatchObject({ ok: false, reason: 'already_claimed', claimedByRunId: 'r-win' })
      expect(await store.getDecision(threadId, 'r-late')).toBeUndefined()
      expect(await store.listDecisions(threadId)).toEqual([record])
      expect(await store.getDecision(threadId, 'r-busy')).toBeUndefined()
      expect(await store.getDecision('other-thread', 'r-win')).toBeUndefined()
    }))

  it('claimBatches (where a store offers it) decides each claim like claimBatch; a refused one leaves nothing', () =>
    withDb(async (store) => {
      if (!store.claimBatches) return
      expect(await store.claimBatches([])).toEqual([])
      const [a, b, c] = [await paused(store), await paused(store), await paused(store)]
      const request = (
        p: { threadId: string; batchId: string },
        runId: string,
        extra: Partial<ClaimBatchRequest> = {},
      ) => ({
        threadId: p.threadId,
        batchId: p.batchId,
        runId,
        decisionHash: 'h-expiry',
        decision: [],
        now,
        ...claimer,
        decidedBy: SYSTEM_EXPIRY_PRINCIPAL,
        via: 'expiry' as const,
        ...extra,
      })
      expect((await claimOf(store, b.threadId, b.batchId)('r-person')).ok).toBe(true)
      const results = await store.claimBatches([
        request(a, 'x-a'),
        request(b, 'x-b'),
        // The run that raised c's batch: refused after the batch row was updated, which must be undone.
        request(c, c.runId),
        // a again, within the same transaction: the first claim already took it.
        request(a, 'x-a2'),
      ])
      expect(results.map((r) => (r.ok ? 'ok' : r.reason))).toEqual([
        'ok',
        'already_claimed',
        'run_exists',
        'already_claimed',
      ])
      expect(await store.listDecisions(a.threadId)).toMatchObject([
        { runId: 'x-a', decidedBy: SYSTEM_EXPIRY_PRINCIPAL, via: 'expiry' },
      ])
      expect(await store.listDecisions(b.threadId)).toMatchObject([{ runId: 'r-person' }])
      expect(await store.listDecisions(c.threadId)).toEqual([])
      expect((await store.getOpenBatch(c.threadId))?.batchId).toBe(c.batchId)
      expect(await store.getThread(c.threadId)).toMatchObject({ status: 'interrupted', activeRunId: undefined })
      expect(await store.getRun(a.threadId, 'x-a')).toMatchObject({ kind: 'resume', status: 'running' })
      expect(await store.getRun(a.threadId, 'x-a2')).toBeUndefined()
    }))

  it('concurrent claims from two connections leave exactly one decision record, the winner’s', () =>
    withDb(async (store, db) => {
      const other = await db.connect()
      const { threadId, batchId } = await paused(store)
      const results = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          claimOf(i % 2 ? other : store, threadId, batchId)(`r-${i}`, { decidedBy: `p${i}` }),
        ),
      )
      const winner = results.findIndex((r) => r.ok)
      expect(results.filter((r) => r.ok)).toHaveLength(1)
      expect((await other.listDecisions(threadId)).map((d) => [d.runId, d.decidedBy])).toEqual([
        [`r-${winner}`, `p${winner}`],
      ])
    }))

  it('lists a thread’s decisions oldest first (also within one millisecond); getDecision finds one by run', () =>
    withDb(async (store) => {
      const { threadId, batchId } = await paused(store)
      const elsewhere = await paused(store)
      await claimOf(store, elsewhere.threadId, elsewhere.batchId)('r-1')
      expect((await claimOf(store, threadId, batchId)('r-1', { decidedBy: 'bob' })).ok).toBe(true)
      // The resumed run pauses again; the second batch is decided by the deadline, at the same time.
      await store.createBatch(kit.batchFor(threadId, 'r-1', 'b-second'))
      await finish(store, threadId, 'r-1', {
        status: 'interrupted',
        outcome: { type: 'interrupt', interrupts: [] },
        closeBatch: { batchId, status: 'resolved' },
      })
      const decide = claimOf(store, threadId, 'b-second')
      expect((await decide('r-2', { decidedBy: SYSTEM_EXPIRY_PRINCIPAL, via: 'expiry' })).ok).toBe(true)
      const decisions = await store.listDecisions(threadId)
      expect(decisions.map((d) => [d.runId, d.decidedBy, d.via, d.interruptIds])).toEqual([
        ['r-1', 'bob', 'run', [`${batchId}-i1`]],
        ['r-2', SYSTEM_EXPIRY_PRINCIPAL, 'expiry', ['b-second-i1']],
      ])
      expect(await store.getDecision(threadId, 'r-2')).toEqual(decisions[1])
      expect(await store.getDecision(threadId, 'r-3')).toBeUndefined()
      expect(await store.listDecisions('no-such-thread')).toEqual([])
    }))

  it('stores the title when the thread is created; later input does not change it', () =>
    withDb(async (store) => {
      const { threadId, runId } = ids()
      await start(store, threadId, runId, null, { title: 'deploy v1' })
      expect(await store.getThread(threadId)).toMatchObject({ title: 'deploy v1' })
      await finish(store, threadId, runId)
      const revision = (await store.getThread(threadId))!.revision
      expect((await start(store, threadId, 'r-2', revision, { title: 'something else' })).ok).toBe(true)
      expect((await store.getAdmissionView(threadId, 'r-2', { history: false }))!.thread.title).toBe('deploy v1')
      expect((await store.listThreads('alice', { limit: 5 })).map((t) => t.title)).toEqual(['deploy v1'])
      const untitled = ids()
      await start(store, untitled.threadId, untitled.runId)
      expect((await store.getThread(untitled.threadId))!.title).toBeUndefined()
    }))

  it('round-trips each expiry policy through every read of a batch', () =>
    withDb(async (store) => {
      for (const onExpiry of ['deny', 'cancel', 'keep'] as const) {
        const { threadId, runId, batchId } = await paused(store, { batch: { onExpiry } })
        expect(await store.getOpenBatch(threadId)).toMatchObject({ batchId, onExpiry })
        expect(await store.getBatchOfInterrupt(threadId, `${batchId}-i1`)).toMatchObject({ onExpiry })
        expect((await store.getAdmissionView(threadId, runId, { history: false }))!.openBatch).toMatchObject({
          onExpiry,
        })
      }
    }))

  it('lists open batches of every owner newest first, with keyset pages, owner and title; never a claimed one', () =>
    withDb(async (store) => {
      const made: { threadId: string; batchId: string; ownerId: string; createdAt: number }[] = []
      for (const [i, ownerId] of ['alice', 'bob', 'alice', 'bob', 'carol'].entries()) {
        // Two batches share a creation time: the batch id orders them.
        const createdAt = now + Math.min(i, 3) * 10
        const input = { ownerId, now: createdAt, title: `task ${i}` }
        // The first has expired long ago (a kept batch): still open, still listed.
        const batch = { createdAt, expiresAt: i === 0 ? now - 1 : createdAt + 1000 }
        made.push({ ...(await paused(store, { input, batch })), ownerId, createdAt })
      }
      const claimed = await paused(store, { input: { now: now + 500 }, batch: { createdAt: now + 500 } })
      await claimOf(store, claimed.threadId, claimed.batchId)('r-claim')
      const resolved = await paused(store, { input: { now: now + 600 }, batch: { createdAt: now + 600 } })
      await claimOf(store, resolved.threadId, resolved.batchId)('r-done')
      await finish(store, resolved.threadId, 'r-done', {
        closeBatch: { batchId: resolved.batchId, status: 'resolved' },
      })

      const expected = [...made].sort((a, b) => b.createdAt - a.createdAt || (a.batchId < b.batchId ? 1 : -1))
      const pages: PendingBatchRecord[][] = []
      let before: { createdAt: number; batchId: string } | undefined
      do {
        const page = await store.listPendingBatches({ limit: 2, ...(before ? { before } : {}) })
        pages.push(page)
        const last = page[page.length - 1]
        before = page.length === 2 && last ? { createdAt: last.createdAt, batchId: last.batchId } : undefined
      } while (before)
      expect(pages.map((p) => p.length)).toEqual([2, 2, 1])
      const listed = pages.flat()
      expect(listed.map((b) => b.batchId)).toEqual(expected.map((m) => m.batchId))
      expect(listed.map((b) => b.ownerId)).toEqual(expected.map((m) => m.ownerId))
      const first = listed.find((b) => b.batchId === made[0]!.batchId)!
      expect(first).toMatchObject({ threadId: made[0]!.threadId, status: 'pending', title: 'task 0', onExpiry: 'deny' })
      expect(first.interrupts).toEqual([
        { interrupt: interrupt(`${first.batchId}-i1`, 'c1'), kind: 'approval', toolCallId: 'c1', toolName: 'deploy' },
      ])
      expect(await store.listPendingBatches({ limit: 10 })).toEqual(listed)
      // Only one owner's batches: the inbox of a principal who may decide nothing else.
      const owners = new Set(listed.map((b) => b.ownerId))
      for (const owner of owners)
        expect(await store.listPendingBatches({ limit: 10, owner })).toEqual(listed.filter((b) => b.ownerId === owner))
      expect(await store.listPendingBatches({ limit: 10, owner: 'nobody' })).toEqual([])
    }))

  it('lists due batches: past the deadline, pending, not kept; earliest deadline first, at most the limit', () =>
    withDb(async (store) => {
      const at = (expiresAt: number, onExpiry: NewBatch['onExpiry']) =>
        paused(store, { batch: { expiresAt, onExpiry } })
      const cancel = await at(now - 20, 'cancel')
      const deny = await at(now - 10, 'deny')
      const boundary = await at(now, 'deny')
      await at(now - 30, 'keep')
      await at(now + 1, 'deny')
      const claimed = await at(now - 40, 'deny')
      await claimOf(store, claimed.threadId, claimed.batchId)('r-claim')
      const due = await store.listDueBatches({ now, limit: 10 })
      expect(due.map((b) => b.batchId)).toEqual([cancel.batchId, deny.batchId, boundary.batchId])
      expect(due[0]).toMatchObject({ threadId: cancel.threadId, status: 'pending', onExpiry: 'cancel' })
      expect(due[0]!.interrupts.map((i) => i.interrupt.id)).toEqual([`${cancel.batchId}-i1`])
      expect((await store.listDueBatches({ now, limit: 2 })).map((b) => b.batchId)).toEqual([
        cancel.batchId,
        deny.batchId,
      ])
      expect(await store.listDueBatches({ now: now - 100, limit: 10 })).toEqual([])
    }))

  it('revision: the new reads add 0; a claim that writes its record still adds 1', () =>
    withDb(async (store) => {
      const { threadId, batchId } = await paused(store, { batch: { expiresAt: now - 1 } })
      const reads = [
        () => store.listDecisions(threadId),
        () => store.getDecision(threadId, 'r-x'),
        () => store.listPendingBatches({ limit: 10 }),
        () => store.listDueBatches({ now, limit: 10 }),
        () => store.listOutbox(),
      ]
      for (const read of reads) expect(await growth(store, threadId, read)).toBe(0)
      const outbox = [
        { deliveryId: 'd1', endpoint: 'https://a.example/hook', eventType: 'interrupt.decided', payload: '{}' },
      ]
      expect(await growth(store, threadId, () => claimOf(store, threadId, batchId)('r-win', { outbox }))).toBe(1)
      expect(await growth(store, threadId, () => store.listDecisions(threadId))).toBe(0)
      expect(await growth(store, threadId, () => claimOf(store, threadId, batchId)('r-late', { outbox: [] }))).toBe(0)
    }))
}
