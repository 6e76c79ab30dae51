import { expect, it } from 'vitest'
import type { ConformanceKit } from './kit.ts'

/** Admission: input runs and resumes start exactly once, decided by the database. */
export function admissionCases(kit: ConformanceKit): void {
  const { withDb, ids, start, finish, interrupt, call, toolMessage, paused, now, lease, claimer, batchFor } = kit

  it('creates a thread with the first input run; a second run is refused while one is active', () =>
    withDb(async (store) => {
      const { threadId, runId } = ids()
      const started = await start(store, threadId, runId)
      expect(started.ok).toBe(true)
      const thread = await store.getThread(threadId)
      expect(thread).toMatchObject({
        threadId,
        ownerId: 'alice',
        status: 'running',
        activeRunId: runId,
        state: { n: 0 },
        lastSeq: 0,
        revision: 1,
        createdAt: now,
      })
      expect(await start(store, threadId, 'other')).toEqual({ ok: false, reason: 'thread_exists' })
      expect(await start(store, threadId, 'other', thread!.revision)).toEqual({ ok: false, reason: 'busy' })
      expect(await store.listMessages(threadId)).toEqual([{ id: `u-${runId}`, role: 'user', content: 'hi' }])
      expect(await store.getRun(threadId, runId)).toMatchObject({
        threadId,
        runId,
        kind: 'input',
        status: 'running',
        executorId: 'exec-a',
        leaseUntil: lease.leaseUntil,
        cancelRequested: false,
        outcome: undefined,
        finishedAt: undefined,
      })
      expect(await store.getThread('nope')).toBeUndefined()
      expect(await store.getRun(threadId, 'nope')).toBeUndefined()
    }))

  it('a run id is used once per thread; input carries results for awaiting calls', () =>
    withDb(async (store) => {
      const { threadId, runId } = ids()
      await start(store, threadId, runId)
      await store.insertToolCalls([call(threadId, runId, 'browser1', 'awaiting_result', 'client')])
      await finish(store, threadId, runId, { outcome: { type: 'success', pendingToolCallIds: ['browser1'] } })
      const thread = (await store.getThread(threadId))!
      expect(await start(store, threadId, runId, thread.revision)).toEqual({ ok: false, reason: 'run_exists' })
      expect((await store.getThread(threadId))!.revision).toBe(thread.revision)
      const second = await start(store, threadId, 'r-next', thread.revision, {
        messages: [toolMessage('tm-b', 'browser1', 'result!')],
        toolResults: [{ toolCallId: 'browser1', status: 'succeeded', result: 'result!' }],
      })
      expect(second.ok).toBe(true)
      expect(await store.getToolCall(threadId, 'browser1')).toMatchObject({
        status: 'succeeded',
        result: 'result!',
        kind: 'client',
      })
      expect((await store.listMessages(threadId)).map((m) => m.id)).toEqual([`u-${runId}`, 'tm-b'])
    }))

  it('a stale revision is refused (optimistic concurrency for input admission)', () =>
    withDb(async (store) => {
      const { threadId, runId } = ids()
      await start(store, threadId, runId)
      await finish(store, threadId, runId)
      const thread = (await store.getThread(threadId))!
      expect(await start(store, threadId, 'r-stale', thread.revision - 1)).toEqual({
        ok: false,
        reason: 'revision_changed',
      })
      expect((await start(store, threadId, 'r-next', thread.revision)).ok).toBe(true)
    }))

  it('claims a batch exactly once (conditional update), then reports who claimed it', () =>
    withDb(async (store) => {
      const { threadId, batchId } = await paused(store)
      expect(await store.getThread(threadId)).toMatchObject({ status: 'interrupted', activeRunId: undefined })
      const thread = (await store.getThread(threadId))!
      expect(await start(store, threadId, 'r-input', thread.revision)).toEqual({ ok: false, reason: 'interrupted' })
      const open = (await store.getOpenBatch(threadId))!
      expect(open).toMatchObject({
        batchId,
        threadId,
        status: 'pending',
        createdAt: now,
        expiresAt: now + 1000,
        decisionHash: undefined,
        claimedByRunId: undefined,
      })
      expect(open.interrupts).toEqual([
        { interrupt: interrupt(`${batchId}-i1`, 'c1'), kind: 'approval', toolCallId: 'c1', toolName: 'deploy' },
      ])
      const claim = (runId2: string, hash: string) =>
        store.claimBatch({
          threadId,
          batchId,
          runId: runId2,
          decisionHash: hash,
          decision: [{ interruptId: `${batchId}-i1`, status: 'cancelled' }],
          now,
          ...claimer,
        })
      const results = await Promise.all([claim('r-a', 'h1'), claim('r-b', 'h1'), claim('r-c', 'h2')])
      expect(results.filter((r) => r.ok)).toHaveLength(1)
      const winner = ['r-a', 'r-b', 'r-c'][results.findIndex((r) => r.ok)]
      for (const r of results) if (!r.ok) expect(r).toMatchObject({ reason: 'already_claimed', claimedByRunId: winner })
      expect(await store.getOpenBatch(threadId)).toBeUndefined()
      expect(await store.getBatchOfInterrupt(threadId, `${batchId}-i1`)).toMatchObject({
        status: 'claimed',
        claimedByRunId: winner,
        decision: [{ interruptId: `${batchId}-i1`, status: 'cancelled' }],
      })
      expect(await store.getBatchOfInterrupt('other-thread', `${batchId}-i1`)).toBeUndefined()
      expect(await store.getRun(threadId, winner!)).toMatchObject({
        kind: 'resume',
        status: 'running',
        batchId,
        executorId: 'exec-a',
      })
      expect(await store.getThread(threadId)).toMatchObject({ status: 'running', activeRunId: winner })
      // The resume run closes its batch with the run.
      await finish(store, threadId, winner!, { closeBatch: { batchId, status: 'resolved' } })
      expect(await store.getBatchOfInterrupt(threadId, `${batchId}-i1`)).toMatchObject({ status: 'resolved' })
      expect(await store.getThread(threadId)).toMatchObject({ status: 'idle' })
    }))

  it('concurrent claims from two connections: exactly one wins', () =>
    withDb(async (store, db) => {
      const other = await db.connect()
      for (let round = 0; round < 5; round++) {
        const { threadId, batchId } = await paused(store)
        const stores = [store, other]
        const results = await Promise.all(
          Array.from({ length: 8 }, (_, i) =>
            stores[i % 2]!.claimBatch({
              threadId,
              batchId,
              runId: `r-${round}-${i}`,
              decisionHash: `h${i % 3}`,
              decision: [],
              now,
              ...claimer,
            }),
          ),
        )
        const winners = results.filter((r) => r.ok)
        expect(winners).toHaveLength(1)
        const winner = `r-${round}-${results.findIndex((r) => r.ok)}`
        for (const r of results)
          if (!r.ok) expect(r).toMatchObject({ reason: 'already_claimed', claimedByRunId: winner })
        expect(await other.getThread(threadId)).toMatchObject({ activeRunId: winner })
      }
    }))

  it('concurrent input admissions from two connections: exactly one run starts', () =>
    withDb(async (store, db) => {
      const other = await db.connect()
      const { threadId, runId } = ids()
      await start(store, threadId, runId)
      await finish(store, threadId, runId)
      const revision = (await store.getThread(threadId))!.revision
      const results = await Promise.all(
        Array.from({ length: 6 }, (_, i) => start(i % 2 ? other : store, threadId, `r-in-${i}`, revision)),
      )
      expect(results.filter((r) => r.ok)).toHaveLength(1)
      // Creating the same new thread from both connections.
      const fresh = ids().threadId
      const created = await Promise.all([start(store, fresh, 'x1'), start(other, fresh, 'x2')])
      expect(created.filter((r) => r.ok)).toHaveLength(1)
      expect(created.find((r) => !r.ok)).toMatchObject({ reason: 'thread_exists' })
    }))

  it('reads the admission view from one snapshot', () =>
    withDb(async (store) => {
      const { threadId, runId } = ids()
      expect(await store.getAdmissionView(threadId, runId, { history: true })).toBeUndefined()
      await start(store, threadId, runId)
      await store.insertToolCalls([
        call(threadId, runId, 'ext', 'awaiting_result', 'client'),
        call(threadId, runId, 'c1', 'awaiting_decision'),
      ])
      await store.createBatch(batchFor(threadId, runId, `b-${threadId}`))
      const view = (await store.getAdmissionView(threadId, runId, {
        history: true,
        messageIds: [`u-${runId}`, 'unknown-message'],
        toolCallIds: ['ext', 'c1', 'unknown-call'],
      }))!
      expect(view.thread.threadId).toBe(threadId)
      expect(view.run).toMatchObject({ runId, kind: 'input' })
      expect(view.openBatch?.batchId).toBe(`b-${threadId}`)
      // Only the ids asked about are looked up: the history itself is never read (docs/decisions.md#bounded-histories).
      expect([...view.knownMessageIds]).toEqual([`u-${runId}`])
      expect([...view.knownToolCallIds].sort()).toEqual(['c1', 'ext'])
      expect(view.awaitingResults.map((c) => c.toolCallId)).toEqual(['ext'])
      const light = (await store.getAdmissionView(threadId, 'other-run', {
        history: false,
        messageIds: [`u-${runId}`],
      }))!
      expect(light.run).toBeUndefined()
      expect(light.knownMessageIds.size).toBe(0)
      expect(light.awaitingResults).toEqual([])
    }))
}
