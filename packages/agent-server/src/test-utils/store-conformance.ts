import { describe, expect, it } from 'vitest'
import type { Interrupt, Message } from '@interlude/protocol'
import { RunNotActiveError } from '../store/store.ts'
import type { NewBatch, NewToolCall, Store } from '../store/store.ts'

/** A fresh, empty database for one test, and a way to open a second connection to it. */
export interface ConformanceDatabase {
  readonly store: Store
  /** Another store instance (its own connection / pool) on the same database. */
  connect(): Promise<Store>
  /** Closes every store opened by this database and removes it. */
  dispose(): Promise<void>
}

/**
 * The shared Store conformance suite (docs/architecture.md): SQLite and PostgreSQL both run it. Every method
 * of the interface is exercised, including races decided by the database between two connections.
 */
export function storeConformance(name: string, open: () => Promise<ConformanceDatabase>): void {
  const now = 1_900_000_000_000
  const lease = { executorId: 'exec-a', leaseUntil: now + 60_000 }
  let n = 0
  const ids = () => {
    n += 1
    return { threadId: `t${n}-${Math.random().toString(36).slice(2)}`, runId: `r${n}` }
  }
  const start = (
    store: Store,
    threadId: string,
    runId: string,
    expectedRevision: number | null = null,
    extra: Partial<Parameters<Store['startInputRun']>[0]> = {},
  ) =>
    store.startInputRun({
      threadId,
      ownerId: 'alice',
      runId,
      parentRunId: undefined,
      expectedRevision,
      initialState: { n: 0 },
      messages: [{ id: `u-${runId}`, role: 'user', content: 'hi' }],
      toolResults: [],
      now,
      ...lease,
      ...extra,
    })
  const finish = (
    store: Store,
    threadId: string,
    runId: string,
    extra: Partial<Parameters<Store['finishRun']>[0]> = {},
  ) =>
    store.finishRun({
      threadId,
      runId,
      status: 'succeeded',
      outcome: { type: 'success' },
      errorCode: undefined,
      events: [{ type: 'RUN_FINISHED', json: '{"type":"RUN_FINISHED"}' }],
      closeBatch: undefined,
      now,
      ...extra,
    })
  const interrupt = (id: string, toolCallId: string): Interrupt => ({ id, reason: 'tool_call', toolCallId })
  const batchFor = (threadId: string, runId: string, batchId: string, toolCallId = 'c1'): NewBatch => ({
    batchId,
    threadId,
    runId,
    interrupts: [
      { interrupt: interrupt(`${batchId}-i1`, toolCallId), kind: 'approval', toolCallId, toolName: 'deploy' },
    ],
    createdAt: now,
    expiresAt: now + 1000,
  })
  const call = (
    threadId: string,
    runId: string,
    toolCallId: string,
    status: NewToolCall['status'] = 'pending',
    kind: NewToolCall['kind'] = 'server',
  ): NewToolCall => ({
    threadId,
    toolCallId,
    runId,
    messageId: 'a1',
    toolName: 'deploy',
    argsText: '{"v":1}',
    kind,
    status,
    now,
  })
  const toolMessage = (id: string, toolCallId: string, content = '"ok"'): Message => ({
    id,
    role: 'tool',
    toolCallId,
    content,
  })
  /** A thread paused with one open batch (its run finished as interrupted). */
  const paused = async (store: Store) => {
    const { threadId, runId } = ids()
    await start(store, threadId, runId)
    await store.insertToolCalls([call(threadId, runId, 'c1', 'awaiting_decision')])
    await store.createBatch(batchFor(threadId, runId, `b-${threadId}`))
    await finish(store, threadId, runId, { status: 'interrupted', outcome: { type: 'interrupt', interrupts: [] } })
    return { threadId, runId, batchId: `b-${threadId}` }
  }

  describe(`Store conformance: ${name}`, () => {
    async function withDb(fn: (store: Store, db: ConformanceDatabase) => Promise<void>): Promise<void> {
      const db = await open()
      try {
        await fn(db.store, db)
      } finally {
        await db.dispose()
      }
    }

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

    it('appends events with strictly increasing per-thread seq, readable by run, after a cursor, with a limit', () =>
      withDb(async (store) => {
        const { threadId, runId } = ids()
        await start(store, threadId, runId)
        const a = await store.appendEvents(threadId, runId, [
          { type: 'RUN_STARTED', json: '{"a":1}' },
          { type: 'TEXT_MESSAGE_START', json: '{"a":"😀 ü"}' },
        ])
        const b = await store.appendEvents(threadId, runId, [{ type: 'TEXT_MESSAGE_END', json: '{"a":3}' }])
        expect(await store.appendEvents(threadId, runId, [])).toEqual([])
        expect([...a, ...b].map((e) => e.seq)).toEqual([1, 2, 3])
        expect(a[1]).toEqual({ seq: 2, runId, type: 'TEXT_MESSAGE_START', json: '{"a":"😀 ü"}' })
        expect((await store.readEvents(threadId, { afterSeq: 1 })).map((e) => e.json)).toEqual([
          '{"a":"😀 ü"}',
          '{"a":3}',
        ])
        expect((await store.readEvents(threadId, { limit: 2 })).map((e) => e.seq)).toEqual([1, 2])
        expect((await store.readEvents(threadId, { runId, afterSeq: 2 })).map((e) => e.seq)).toEqual([3])
        expect((await store.readEvents(threadId, { runId: 'nope' })).length).toBe(0)
        const stored = await finish(store, threadId, runId)
        expect(stored!.map((e) => e.seq)).toEqual([4])
        expect(await store.getThread(threadId)).toMatchObject({ status: 'idle', activeRunId: undefined, lastSeq: 4 })
        expect(await store.getRun(threadId, runId)).toMatchObject({
          status: 'succeeded',
          outcome: { type: 'success' },
          finishedAt: now,
        })
        // A finished run is not finished twice.
        expect(await finish(store, threadId, runId)).toBeUndefined()
        expect((await store.getThread(threadId))!.lastSeq).toBe(4)
      }))

    it('fences every write of a run that is no longer the active run', () =>
      withDb(async (store) => {
        const { threadId, runId } = ids()
        await start(store, threadId, runId)
        await store.insertToolCalls([call(threadId, runId, 'c1')])
        await finish(store, threadId, runId)
        const before = await store.getThread(threadId)
        await expect(store.appendEvents(threadId, runId, [{ type: 'X', json: '{}' }])).rejects.toBeInstanceOf(
          RunNotActiveError,
        )
        await expect(
          store.appendMessages(threadId, runId, [{ id: 'late', role: 'user', content: 'x' }]),
        ).rejects.toBeInstanceOf(RunNotActiveError)
        await expect(store.insertToolCalls([call(threadId, runId, 'c2')])).rejects.toBeInstanceOf(RunNotActiveError)
        await expect(
          store.settleToolCall({
            threadId,
            runId,
            toolCallId: 'c1',
            status: 'succeeded',
            result: 'x',
            message: toolMessage('tm', 'c1'),
            now,
          }),
        ).rejects.toBeInstanceOf(RunNotActiveError)
        await expect(store.createBatch(batchFor(threadId, runId, `b-${threadId}`))).rejects.toBeInstanceOf(
          RunNotActiveError,
        )
        expect(await store.beginEffect(threadId, 'c1', runId, now)).toBe('not_active')
        expect(await store.getThread(threadId)).toEqual(before)
        expect(await store.getToolCall(threadId, 'c1')).toMatchObject({ status: 'pending' })
        expect(await store.getOpenBatch(threadId)).toBeUndefined()
        expect((await store.readEvents(threadId, {})).length).toBe(1)
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
            ...lease,
          })
        const results = await Promise.all([claim('r-a', 'h1'), claim('r-b', 'h1'), claim('r-c', 'h2')])
        expect(results.filter((r) => r.ok)).toHaveLength(1)
        const winner = ['r-a', 'r-b', 'r-c'][results.findIndex((r) => r.ok)]
        for (const r of results)
          if (!r.ok) expect(r).toMatchObject({ reason: 'already_claimed', claimedByRunId: winner })
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
                ...lease,
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

    it('appends from two connections interleave with unique, gap-free seq', () =>
      withDb(async (store, db) => {
        const other = await db.connect()
        const { threadId, runId } = ids()
        await start(store, threadId, runId)
        const batches = await Promise.all(
          Array.from({ length: 10 }, (_, i) =>
            (i % 2 ? other : store).appendEvents(threadId, runId, [
              { type: 'A', json: `{"i":${i}}` },
              { type: 'B', json: '{}' },
            ]),
          ),
        )
        const seqs = batches
          .flat()
          .map((e) => e.seq)
          .sort((x, y) => x - y)
        expect(seqs).toEqual(Array.from({ length: 20 }, (_, i) => i + 1))
        for (const batch of batches) expect(batch[1]!.seq).toBe(batch[0]!.seq + 1)
      }))

    it('the effects ledger starts a call at most once and settles it with its message and state atomically', () =>
      withDb(async (store, db) => {
        const { threadId, runId } = ids()
        await start(store, threadId, runId)
        await store.insertToolCalls([call(threadId, runId, 'c1'), call(threadId, runId, 'c2', 'awaiting_decision')])
        const other = await db.connect()
        const begun = await Promise.all([
          store.beginEffect(threadId, 'c1', runId, now),
          other.beginEffect(threadId, 'c1', runId, now),
        ])
        expect(begun.sort()).toEqual(['already_started', 'started'])
        expect(await store.getToolCall(threadId, 'c1')).toMatchObject({
          status: 'started',
          attemptRunId: runId,
          startedAt: now,
          argsText: '{"v":1}',
          messageId: 'a1',
        })
        const before = (await store.getThread(threadId))!.revision
        await store.settleToolCall({
          threadId,
          runId,
          toolCallId: 'c1',
          status: 'succeeded',
          result: '"ok"',
          message: toolMessage('tm1', 'c1'),
          state: { n: 1 },
          now,
        })
        expect(await store.getToolCall(threadId, 'c1')).toMatchObject({
          status: 'succeeded',
          result: '"ok"',
          finishedAt: now,
        })
        expect(await store.getThread(threadId)).toMatchObject({ state: { n: 1 } })
        expect((await store.getThread(threadId))!.revision).toBeGreaterThan(before)
        expect((await store.listMessages(threadId)).map((m) => m.id)).toEqual([`u-${runId}`, 'tm1'])
        expect(await store.beginEffect(threadId, 'c1', runId, now)).toBe('already_started')
        expect(await store.beginEffect(threadId, 'c2', runId, now)).toBe('started')
        await store.settleToolCall({
          threadId,
          runId,
          toolCallId: 'c2',
          status: 'awaiting_result',
          result: undefined,
          message: undefined,
          now,
        })
        expect(await store.getToolCall(threadId, 'c2')).toMatchObject({ status: 'awaiting_result', result: undefined })
        expect((await store.listToolCalls(threadId)).map((c) => c.toolCallId)).toEqual(['c1', 'c2'])
        expect((await store.listToolCalls(threadId, { status: ['awaiting_result'] })).map((c) => c.toolCallId)).toEqual(
          ['c2'],
        )
        expect(await store.listToolCalls(threadId, { status: ['started'] })).toEqual([])
        expect(await store.getToolCall(threadId, 'nope')).toBeUndefined()
      }))

    it('a cancel request is a flag on the running run; no effect starts after it', () =>
      withDb(async (store, db) => {
        const { threadId, runId } = ids()
        await start(store, threadId, runId)
        await store.insertToolCalls([call(threadId, runId, 'c1')])
        const other = await db.connect()
        const flagged = await other.requestCancel(threadId, runId, now)
        expect(flagged).toMatchObject({ status: 'running', cancelRequested: true })
        expect(await store.beginEffect(threadId, 'c1', runId, now)).toBe('cancel_requested')
        expect(await store.getToolCall(threadId, 'c1')).toMatchObject({ status: 'pending' })
        expect(await store.heartbeatRuns('exec-a', now + 1)).toEqual([{ threadId, runId, cancelRequested: true }])
        await finish(store, threadId, runId, { status: 'cancelled', outcome: { type: 'cancelled' } })
        expect(await store.requestCancel(threadId, runId, now)).toMatchObject({ status: 'cancelled' })
        expect(await store.requestCancel(threadId, 'nope', now)).toBeUndefined()
      }))

    it('leases: heartbeats renew the executor’s runs; expired runs are listed and taken over exactly once', () =>
      withDb(async (store, db) => {
        const a = ids()
        const b = ids()
        await start(store, a.threadId, a.runId, null, { executorId: 'exec-a', leaseUntil: now + 10 })
        await start(store, b.threadId, b.runId, null, { executorId: 'exec-b', leaseUntil: now + 10 })
        expect(await store.heartbeatRuns('exec-a', now + 100)).toEqual([
          { threadId: a.threadId, runId: a.runId, cancelRequested: false },
        ])
        expect(await store.getRun(a.threadId, a.runId)).toMatchObject({ leaseUntil: now + 100 })
        const expired = await store.listAbandonedRuns({ now: now + 50 })
        expect(expired).toContainEqual({ threadId: b.threadId, runId: b.runId })
        expect(expired).not.toContainEqual({ threadId: a.threadId, runId: a.runId })
        const all = await store.listAbandonedRuns({ now: now + 50, all: true, excludeExecutor: 'exec-b' })
        expect(all).toContainEqual({ threadId: a.threadId, runId: a.runId })
        expect(all).not.toContainEqual({ threadId: b.threadId, runId: b.runId })
        // Alive: not taken without force.
        expect(
          await store.takeOverRun({ ...a, executorId: 'exec-c', leaseUntil: now + 500, now: now + 50, force: false }),
        ).toBeUndefined()
        const other = await db.connect()
        const takes = await Promise.all([
          store.takeOverRun({ ...b, executorId: 'exec-c', leaseUntil: now + 500, now: now + 50, force: false }),
          other.takeOverRun({ ...b, executorId: 'exec-d', leaseUntil: now + 500, now: now + 50, force: false }),
        ])
        expect(takes.filter((t) => t !== undefined)).toHaveLength(1)
        expect(takes.find((t) => t !== undefined)).toMatchObject({ status: 'running', leaseUntil: now + 500 })
        expect(await store.heartbeatRuns('exec-b', now + 1000)).toEqual([])
        expect(
          await store.takeOverRun({ ...a, executorId: 'exec-c', leaseUntil: now + 500, now: now + 50, force: true }),
        ).toMatchObject({ executorId: 'exec-c' })
      }))

    it('closes an abandoned run in one transaction: conditional call settlement, state, events, batch, release', () =>
      withDb(async (store) => {
        const { threadId, batchId } = await paused(store)
        const resume = 'r-resume'
        await store.claimBatch({ threadId, batchId, runId: resume, decisionHash: 'h', decision: [], now, ...lease })
        await store.insertToolCalls([call(threadId, resume, 'c-started'), call(threadId, resume, 'c-done')])
        expect(await store.beginEffect(threadId, 'c-started', resume, now)).toBe('started')
        await store.appendEvents(threadId, resume, [{ type: 'RUN_STARTED', json: '{}' }])
        const stored = await store.finishRun({
          threadId,
          runId: resume,
          status: 'failed',
          outcome: undefined,
          errorCode: 'RUN_FAILED',
          events: [
            { type: 'TOOL_CALL_RESULT', json: '{}' },
            { type: 'RUN_ERROR', json: '{"type":"RUN_ERROR"}' },
          ],
          closeBatch: { batchId, status: 'resolved' },
          closeCalls: [
            {
              toolCallId: 'c-started',
              from: ['started'],
              status: 'unknown',
              result: 'unknown!',
              message: toolMessage('m-unknown', 'c-started', 'unknown!'),
            },
            {
              toolCallId: 'c1',
              from: ['awaiting_decision'],
              status: 'cancelled',
              result: 'nope',
              message: toolMessage('m-c1', 'c1', 'nope'),
            },
            // Already settled elsewhere: skipped, no message.
            {
              toolCallId: 'c-done',
              from: ['started'],
              status: 'cancelled',
              result: 'x',
              message: toolMessage('m-done', 'c-done', 'x'),
            },
          ],
          state: { n: 7 },
          now,
        })
        expect(stored!.map((e) => e.type)).toEqual(['TOOL_CALL_RESULT', 'RUN_ERROR'])
        expect(await store.getRun(threadId, resume)).toMatchObject({ status: 'failed', errorCode: 'RUN_FAILED' })
        expect(await store.getToolCall(threadId, 'c-started')).toMatchObject({ status: 'unknown', result: 'unknown!' })
        expect(await store.getToolCall(threadId, 'c1')).toMatchObject({ status: 'cancelled' })
        expect(await store.getToolCall(threadId, 'c-done')).toMatchObject({ status: 'pending' })
        expect((await store.listMessages(threadId)).map((m) => m.id)).toEqual(
          expect.arrayContaining(['m-unknown', 'm-c1']),
        )
        expect((await store.listMessages(threadId)).map((m) => m.id)).not.toContain('m-done')
        expect(await store.getThread(threadId)).toMatchObject({
          status: 'idle',
          activeRunId: undefined,
          state: { n: 7 },
        })
        expect(await store.getBatchOfInterrupt(threadId, `${batchId}-i1`)).toMatchObject({ status: 'resolved' })
        expect(await store.listToolCalls(threadId, { status: ['unknown'] })).toHaveLength(1)
      }))

    it('a run that ends while its batch is pending leaves the thread interrupted, the batch answerable', () =>
      withDb(async (store) => {
        const { threadId, runId } = ids()
        await start(store, threadId, runId)
        await store.insertToolCalls([call(threadId, runId, 'c1', 'awaiting_decision')])
        await store.createBatch(batchFor(threadId, runId, `b-${threadId}`))
        await finish(store, threadId, runId, { status: 'failed', outcome: undefined, errorCode: 'RUN_FAILED' })
        expect(await store.getThread(threadId)).toMatchObject({ status: 'interrupted', activeRunId: undefined })
        expect((await store.getOpenBatch(threadId))?.batchId).toBe(`b-${threadId}`)
      }))

    it('messages are append-only: a known id cannot be written twice', () =>
      withDb(async (store) => {
        const { threadId, runId } = ids()
        await start(store, threadId, runId)
        const revision = (await store.getThread(threadId))!.revision
        await store.appendMessages(threadId, runId, [{ id: 'a1', role: 'assistant', content: '中文 😀' }])
        expect((await store.getThread(threadId))!.revision).toBe(revision + 1)
        await expect(
          store.appendMessages(threadId, runId, [{ id: `u-${runId}`, role: 'user', content: 'again' }]),
        ).rejects.toThrow()
        expect(await store.listMessages(threadId)).toEqual([
          { id: `u-${runId}`, role: 'user', content: 'hi' },
          { id: 'a1', role: 'assistant', content: '中文 😀' },
        ])
      }))

    it('setState replaces the state and bumps the revision', () =>
      withDb(async (store) => {
        const { threadId, runId } = ids()
        await start(store, threadId, runId)
        const before = (await store.getThread(threadId))!
        await store.setState(threadId, { deep: { list: [1, 2] }, s: 'ü' })
        const after = (await store.getThread(threadId))!
        expect(after.state).toEqual({ deep: { list: [1, 2] }, s: 'ü' })
        expect(after.revision).toBe(before.revision + 1)
      }))

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
        const view = (await store.getAdmissionView(threadId, runId, { history: true }))!
        expect(view.thread.threadId).toBe(threadId)
        expect(view.run).toMatchObject({ runId, kind: 'input' })
        expect(view.openBatch?.batchId).toBe(`b-${threadId}`)
        expect(view.messages.map((m) => m.id)).toEqual([`u-${runId}`])
        expect(view.awaitingResults.map((c) => c.toolCallId)).toEqual(['ext'])
        const light = (await store.getAdmissionView(threadId, 'other-run', { history: false }))!
        expect(light.run).toBeUndefined()
        expect(light.messages).toEqual([])
        expect(light.awaitingResults).toEqual([])
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
  })
}
