import { expect, it } from 'vitest'
import type { ConformanceKit } from './kit.ts'

/**
 * The revision contract (the `Store` doc, docs/architecture.md): a thread snapshot's revision is
 * "+1 on every committed change" (docs/protocol.md). Every mutating method is pinned to exactly
 * how much it adds — 1 for one committed change of the snapshot, however many rows it writes; 0
 * for log-only, ledger-only and bookkeeping writes and for every refused or fenced one.
 */
export function revisionCases(kit: ConformanceKit): void {
  const { withDb, ids, start, finish, call, toolMessage, batchFor, paused, now, lease, claimer, growth } = kit

  it('revision: a new thread starts at 1; each admitted input run adds 1, each refused one 0', () =>
    withDb(async (store) => {
      const { threadId, runId } = ids()
      await start(store, threadId, runId)
      expect((await store.getThread(threadId))!.revision).toBe(1)
      expect(await growth(store, threadId, () => start(store, threadId, 'r-x'))).toBe(0) // thread_exists
      expect(await growth(store, threadId, () => start(store, threadId, 'r-x', 1))).toBe(0) // busy
      await finish(store, threadId, runId)
      const revision = (await store.getThread(threadId))!.revision
      expect(await growth(store, threadId, () => start(store, threadId, 'r-x', revision - 1))).toBe(0) // stale
      expect(await growth(store, threadId, () => start(store, threadId, runId, revision))).toBe(0) // run_exists
      expect(await growth(store, threadId, () => start(store, threadId, 'r-next', revision))).toBe(1)
      const other = await paused(store)
      const at = (await store.getThread(other.threadId))!.revision
      expect(await growth(store, other.threadId, () => start(store, other.threadId, 'r-y', at))).toBe(0) // interrupted
    }))

  it('revision: a won claim adds 1, every refused claim 0', () =>
    withDb(async (store) => {
      const { threadId, runId, batchId } = await paused(store)
      const claim = (claimRunId: string, claimBatchId = batchId) =>
        store.claimBatch({
          threadId,
          batchId: claimBatchId,
          runId: claimRunId,
          decisionHash: 'h',
          decision: [],
          now,
          ...claimer,
        })
      expect(await growth(store, threadId, () => claim(runId))).toBe(0) // run_exists
      expect(await growth(store, threadId, () => claim('r-unknown', 'no-such-batch'))).toBe(0) // not_pending
      expect(await growth(store, threadId, () => claim('r-win'))).toBe(1)
      expect(await growth(store, threadId, () => claim('r-late'))).toBe(0) // already_claimed
    }))

  it('revision: messages, state, a settled call and a batch add 1 each; events, call records and effects add 0', () =>
    withDb(async (store) => {
      const { threadId, runId } = ids()
      await start(store, threadId, runId)
      const events = [
        { type: 'A', json: '{}' },
        { type: 'B', json: '{}' },
      ]
      expect(await growth(store, threadId, () => store.appendEvents(threadId, runId, events))).toBe(0)
      const messages = [
        { id: 'm1', role: 'assistant' as const, content: 'one' },
        { id: 'm2', role: 'assistant' as const, content: 'two' },
      ]
      expect(await growth(store, threadId, () => store.appendMessages(threadId, runId, messages))).toBe(1)
      expect(await growth(store, threadId, () => store.setState(threadId, { n: 1 }))).toBe(1)
      const calls = ['c1', 'c2', 'c3', 'c4'].map((id) => call(threadId, runId, id))
      expect(await growth(store, threadId, () => store.insertToolCalls(calls))).toBe(0)
      expect(await growth(store, threadId, () => store.beginEffect(threadId, 'c1', runId, now))).toBe(0)
      expect(await growth(store, threadId, () => store.beginEffect(threadId, 'c1', runId, now))).toBe(0)
      const settle = (toolCallId: string, extra: object) =>
        store.settleToolCall({
          threadId,
          runId,
          toolCallId,
          status: 'succeeded',
          result: '"ok"',
          message: undefined,
          now,
          ...extra,
        })
      expect(await growth(store, threadId, () => settle('c1', {}))).toBe(1)
      expect(await growth(store, threadId, () => settle('c2', { message: toolMessage('tm2', 'c2') }))).toBe(1)
      const both = { message: toolMessage('tm3', 'c3'), state: { n: 2 } }
      expect(await growth(store, threadId, () => settle('c3', both))).toBe(1)
      const batch = batchFor(threadId, runId, `b-${threadId}`, 'c4')
      expect(await growth(store, threadId, () => store.createBatch(batch))).toBe(1)
    }))

  it('revision: finishing a run adds 1 for the whole transaction, with state, closed calls and batch', () =>
    withDb(async (store) => {
      const plain = ids()
      await start(store, plain.threadId, plain.runId)
      expect(await growth(store, plain.threadId, () => finish(store, plain.threadId, plain.runId))).toBe(1)
      expect(await growth(store, plain.threadId, () => finish(store, plain.threadId, plain.runId))).toBe(0)

      const withState = ids()
      await start(store, withState.threadId, withState.runId)
      const finished = () => finish(store, withState.threadId, withState.runId, { state: { n: 9 } })
      expect(await growth(store, withState.threadId, finished)).toBe(1)
      expect(await store.getThread(withState.threadId)).toMatchObject({ state: { n: 9 }, status: 'idle' })

      const { threadId, batchId } = await paused(store)
      await store.claimBatch({ threadId, batchId, runId: 'r-resume', decisionHash: 'h', decision: [], now, ...claimer })
      await store.insertToolCalls([call(threadId, 'r-resume', 'c-a'), call(threadId, 'r-resume', 'c-b')])
      const closing = () =>
        finish(store, threadId, 'r-resume', {
          status: 'failed',
          outcome: undefined,
          errorCode: 'RUN_FAILED',
          closeBatch: { batchId, status: 'resolved' },
          closeCalls: ['c-a', 'c-b', 'c1'].map((toolCallId) => ({
            toolCallId,
            from: ['pending', 'awaiting_decision'] as const,
            status: 'cancelled' as const,
            result: 'x',
            message: toolMessage(`m-${toolCallId}`, toolCallId, 'x'),
          })),
          state: { n: 3 },
        })
      expect(await growth(store, threadId, closing)).toBe(1)
      expect((await store.listMessages(threadId)).map((m) => m.id)).toEqual(
        expect.arrayContaining(['m-c-a', 'm-c-b', 'm-c1']),
      )
    }))

  it('revision: cancel flags, heartbeats, take-overs, settings and fenced writes add 0', () =>
    withDb(async (store) => {
      const { threadId, runId } = ids()
      await start(store, threadId, runId)
      await store.insertToolCalls([call(threadId, runId, 'c1')])
      expect(await growth(store, threadId, () => store.requestCancel(threadId, runId, now))).toBe(0)
      expect(await growth(store, threadId, () => store.heartbeatRuns(lease.executorId, now + 1))).toBe(0)
      const takeOver = { threadId, runId, executorId: 'exec-b', leaseUntil: now + 2, now, force: true }
      expect(await growth(store, threadId, () => store.takeOverRun(takeOver))).toBe(0)
      expect(await growth(store, threadId, () => store.getOrCreateSetting('k', () => 'v'))).toBe(0)
      await finish(store, threadId, runId, { status: 'cancelled', outcome: { type: 'cancelled' } })
      const late = () => store.appendMessages(threadId, runId, [{ id: 'late', role: 'user', content: 'x' }])
      expect(await growth(store, threadId, () => late().catch(() => undefined))).toBe(0)
      const settle = () =>
        store.settleToolCall({
          threadId,
          runId,
          toolCallId: 'c1',
          status: 'cancelled',
          result: 'x',
          message: undefined,
          state: { n: 5 },
          now,
        })
      expect(await growth(store, threadId, () => settle().catch(() => undefined))).toBe(0)
      const batch = batchFor(threadId, runId, `b-${threadId}`)
      expect(await growth(store, threadId, () => store.createBatch(batch).catch(() => undefined))).toBe(0)
    }))

  it('a claim while the run that raised the batch is still active is busy, also with a taken run id', () =>
    withDb(async (store) => {
      const { threadId, runId } = ids()
      await start(store, threadId, runId)
      await store.insertToolCalls([call(threadId, runId, 'c1', 'awaiting_decision')])
      await store.createBatch(batchFor(threadId, runId, `b-${threadId}`))
      const claim = (claimRunId: string) =>
        store.claimBatch({
          threadId,
          batchId: `b-${threadId}`,
          runId: claimRunId,
          decisionHash: 'h',
          decision: [],
          now,
          ...claimer,
        })
      expect(await claim('r-new')).toEqual({ ok: false, reason: 'busy' })
      // A busy thread is reported before a taken run id (the order of `claimRefusal`).
      expect(await claim(runId)).toEqual({ ok: false, reason: 'busy' })
      expect(await store.getOpenBatch(threadId)).toMatchObject({ status: 'pending', claimedByRunId: undefined })
    }))

  it('a batch id of another thread is not pending on this one, claimed or not (nothing leaks across threads)', () =>
    withDb(async (store) => {
      const a = await paused(store)
      const b = await paused(store)
      const claim = (threadId: string, runId: string) =>
        store.claimBatch({ threadId, batchId: a.batchId, runId, decisionHash: 'h', decision: [], now, ...claimer })
      expect(await claim(b.threadId, 'r-cross')).toEqual({ ok: false, reason: 'not_pending' })
      expect((await claim(a.threadId, 'r-own')).ok).toBe(true)
      expect(await claim(b.threadId, 'r-cross')).toEqual({ ok: false, reason: 'not_pending' })
      expect(await store.getThread(b.threadId)).toMatchObject({ status: 'interrupted', activeRunId: undefined })
    }))
}
