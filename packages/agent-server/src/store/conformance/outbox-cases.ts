import { expect, it } from 'vitest'
import { RunNotActiveError } from '../store.ts'
import type { NewOutboxDelivery, OutboxDelivery, Store } from '../store.ts'
import type { ConformanceKit } from './kit.ts'

/**
 * The durable webhook outbox (docs/approvals.md#webhooks): a delivery is written with the change it
 * reports or not at all, locked by one sender at a time, and settled only by the sender holding it.
 */
export function outboxCases(kit: ConformanceKit): void {
  const { withDb, ids, start, finish, batchFor, now, claimer, growth } = kit

  const delivery = (deliveryId: string, eventType = 'interrupt.opened'): NewOutboxDelivery => ({
    deliveryId,
    endpoint: 'https://hooks.example/interlude',
    eventType,
    payload: JSON.stringify({ type: eventType, data: { deliveryId, text: 'ü 😀' } }),
  })
  const idsOf = (rows: readonly OutboxDelivery[]) => rows.map((d) => d.deliveryId)
  /** A finished run whose end wrote `deliveryIds` (all created at `now`, in this order). */
  const queued = async (store: Store, deliveryIds: readonly string[]) => {
    const { threadId, runId } = ids()
    await start(store, threadId, runId)
    await finish(store, threadId, runId, { outbox: deliveryIds.map((id) => delivery(id)) })
    return { threadId }
  }

  it('writes deliveries with createBatch, claimBatch and finishRun, and none with a refused or fenced write', () =>
    withDb(async (store) => {
      const { threadId, runId } = ids()
      await start(store, threadId, runId)
      await store.createBatch({ ...batchFor(threadId, runId, 'b1'), outbox: [delivery('d-opened')] })
      const interrupted = { status: 'interrupted' as const, outcome: { type: 'interrupt' as const, interrupts: [] } }
      await finish(store, threadId, runId, {
        ...interrupted,
        now: now + 1,
        outbox: [delivery('d-ended', 'run.failed')],
      })
      expect(await finish(store, threadId, runId, { now: now + 2, outbox: [delivery('x-finished-twice')] })).toBe(
        undefined,
      )
      const fenced = store.createBatch({ ...batchFor(threadId, runId, 'b-late'), outbox: [delivery('x-fenced')] })
      await expect(fenced).rejects.toBeInstanceOf(RunNotActiveError)

      const claim = (claimRunId: string, batchId: string, id: string) =>
        store.claimBatch({
          threadId,
          batchId,
          runId: claimRunId,
          decisionHash: 'h',
          decision: [],
          now: now + 3,
          ...claimer,
          outbox: [delivery(id, 'interrupt.decided')],
        })
      expect(await claim(runId, 'b1', 'x-run-exists')).toEqual({ ok: false, reason: 'run_exists' })
      expect(await claim('r-none', 'no-such-batch', 'x-not-pending')).toEqual({ ok: false, reason: 'not_pending' })
      const won = await store.claimBatch({
        threadId,
        batchId: 'b1',
        runId: 'r-win',
        decisionHash: 'h',
        decision: [],
        now: now + 3,
        ...claimer,
        outbox: [delivery('d-decided', 'interrupt.decided'), delivery('d-decided-2', 'interrupt.decided')],
      })
      expect(won.ok).toBe(true)
      expect(await claim('r-late', 'b1', 'x-already-claimed')).toMatchObject({ reason: 'already_claimed' })
      // A busy thread: its run is still active.
      const busy = ids()
      await start(store, busy.threadId, busy.runId)
      await store.createBatch(batchFor(busy.threadId, busy.runId, 'b-busy'))
      const busyClaim = await store.claimBatch({
        threadId: busy.threadId,
        batchId: 'b-busy',
        runId: 'r-busy',
        decisionHash: 'h',
        decision: [],
        now,
        ...claimer,
        outbox: [delivery('x-busy')],
      })
      expect(busyClaim).toEqual({ ok: false, reason: 'busy' })

      const all = await store.listOutbox()
      expect(idsOf(all)).toEqual(['d-opened', 'd-ended', 'd-decided', 'd-decided-2'])
      expect(all[0]).toEqual({
        ...delivery('d-opened'),
        status: 'pending',
        attempts: 0,
        createdAt: now,
        nextAttemptAt: now,
        lastError: undefined,
        lockedBy: undefined,
        lockedUntil: undefined,
      })
      expect(all[2]).toMatchObject({ eventType: 'interrupt.decided', createdAt: now + 3, nextAttemptAt: now + 3 })
      expect(idsOf(await store.listOutbox({ status: 'pending', limit: 2 }))).toEqual(['d-opened', 'd-ended'])
      expect(await store.listOutbox({ status: 'delivered' })).toEqual([])
    }))

  it('claimOutbox locks due rows to one executor, oldest first, until the lock ends', () =>
    withDb(async (store) => {
      await queued(store, ['d1', 'd2', 'd3'])
      const claim = (executorId: string, at: number, lockUntil: number, limit = 10) =>
        store.claimOutbox({ executorId, now: at, lockUntil, limit })
      expect(await claim('exec-a', now - 1, now + 100)).toEqual([]) // not due yet
      const first = await claim('exec-a', now, now + 100, 2)
      expect(first.map((d) => [d.deliveryId, d.lockedBy, d.lockedUntil])).toEqual([
        ['d1', 'exec-a', now + 100],
        ['d2', 'exec-a', now + 100],
      ])
      expect(first[0]).toMatchObject({ status: 'pending', attempts: 0, payload: delivery('d1').payload })
      expect(idsOf(await claim('exec-b', now + 50, now + 150))).toEqual(['d3'])
      // A lock holds up to and including `lockUntil`.
      expect(await claim('exec-c', now + 100, now + 300)).toEqual([])
      const again = await claim('exec-c', now + 101, now + 300)
      expect(again.map((d) => [d.deliveryId, d.lockedBy, d.lockedUntil])).toEqual([
        ['d1', 'exec-c', now + 300],
        ['d2', 'exec-c', now + 300],
      ])
      expect((await store.listOutbox()).map((d) => d.lockedBy)).toEqual(['exec-c', 'exec-c', 'exec-b'])
    }))

  it('settleOutbox: only the lock holder settles; retry reschedules, delivered and failed are final', () =>
    withDb(async (store) => {
      await queued(store, ['d1', 'd2', 'd3'])
      await store.claimOutbox({ executorId: 'exec-a', now, lockUntil: now + 100, limit: 10 })
      const before = await store.listOutbox()
      expect(await store.settleOutbox({ deliveryId: 'd1', executorId: 'exec-b', outcome: 'delivered' })).toBe(false)
      expect(await store.settleOutbox({ deliveryId: 'nope', executorId: 'exec-a', outcome: 'delivered' })).toBe(false)
      expect(await store.listOutbox()).toEqual(before)

      const retry = { deliveryId: 'd1', executorId: 'exec-a', outcome: 'retry', nextAttemptAt: now + 1000 } as const
      expect(await store.settleOutbox({ ...retry, error: 'HTTP 503' })).toBe(true)
      const d1 = (await store.listOutbox())[0]
      expect(d1).toMatchObject({ deliveryId: 'd1', status: 'pending', attempts: 1, nextAttemptAt: now + 1000 })
      expect(d1).toMatchObject({ lastError: 'HTTP 503', lockedBy: undefined, lockedUntil: undefined })
      // Settled: the lock is released, so the same executor cannot settle it again.
      expect(await store.settleOutbox({ deliveryId: 'd1', executorId: 'exec-a', outcome: 'delivered' })).toBe(false)
      expect(await store.settleOutbox({ deliveryId: 'd2', executorId: 'exec-a', outcome: 'delivered' })).toBe(true)
      const gone = { deliveryId: 'd3', executorId: 'exec-a', outcome: 'failed', error: 'not configured' } as const
      expect(await store.settleOutbox(gone)).toBe(true)

      expect(
        await store.claimOutbox({ executorId: 'exec-b', now: now + 999, lockUntil: now + 2000, limit: 10 }),
      ).toEqual([])
      const retried = await store.claimOutbox({
        executorId: 'exec-b',
        now: now + 1000,
        lockUntil: now + 2000,
        limit: 10,
      })
      expect(idsOf(retried)).toEqual(['d1'])
      expect(await store.settleOutbox({ deliveryId: 'd1', executorId: 'exec-b', outcome: 'delivered' })).toBe(true)
      const later = now + 1_000_000
      expect(await store.claimOutbox({ executorId: 'exec-c', now: later, lockUntil: later + 1, limit: 10 })).toEqual([])
      const settled = (await store.listOutbox()).map((d) => [d.deliveryId, d.status, d.attempts, d.lastError])
      // A delivered row keeps the error of the attempt before it.
      expect(settled).toEqual([
        ['d1', 'delivered', 2, 'HTTP 503'],
        ['d2', 'delivered', 1, undefined],
        ['d3', 'failed', 1, 'not configured'],
      ])
      expect(idsOf(await store.listOutbox({ status: 'failed' }))).toEqual(['d3'])
    }))

  it('revision: claiming, settling and listing deliveries add 0', () =>
    withDb(async (store) => {
      const { threadId } = await queued(store, ['d1'])
      const lock = { executorId: 'exec-a', now, lockUntil: now + 10, limit: 5 }
      expect(await growth(store, threadId, () => store.claimOutbox(lock))).toBe(0)
      const settle = () => store.settleOutbox({ deliveryId: 'd1', executorId: 'exec-a', outcome: 'delivered' })
      expect(await growth(store, threadId, settle)).toBe(0)
      expect(await growth(store, threadId, () => store.listOutbox({ status: 'delivered' }))).toBe(0)
    }))
}
