import { expect, it } from 'vitest'
import { RunNotActiveError } from '../store.ts'
import type { ConformanceKit } from './kit.ts'

/** A run's writes: the event log, fencing, the effects ledger, cancel, leases and the closing transaction. */
export function runCases(kit: ConformanceKit): void {
  const { withDb, ids, start, finish, batchFor, call, toolMessage, paused, now, claimer } = kit

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
      expect((await store.listToolCalls(threadId, { status: ['awaiting_result'] })).map((c) => c.toolCallId)).toEqual([
        'c2',
      ])
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
      await store.claimBatch({ threadId, batchId, runId: resume, decisionHash: 'h', decision: [], now, ...claimer })
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
}
