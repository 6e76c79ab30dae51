import { describe, expect, it } from 'vitest'
import type { Interrupt } from '@interlude/protocol'
import type { NewBatch, Store } from '../store/store.ts'

/**
 * The shared Store conformance suite (DESIGN §3): every implementation (SQLite now, PostgreSQL
 * in issue 4) must pass it. `open()` returns a fresh, empty store.
 */
export function storeConformance(name: string, open: () => Promise<{ store: Store; dispose(): Promise<void> }>): void {
  const now = 1_900_000_000_000
  let n = 0
  const ids = () => {
    n += 1
    return { threadId: `t${n}-${Math.random().toString(36).slice(2)}`, runId: `r${n}` }
  }
  const start = (store: Store, threadId: string, runId: string, expectedRevision: number | null = null) =>
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
    })
  const finish = (store: Store, threadId: string, runId: string) =>
    store.finishRun({
      threadId,
      runId,
      status: 'succeeded',
      outcome: { type: 'success' },
      errorCode: undefined,
      events: [{ type: 'RUN_FINISHED', json: '{"type":"RUN_FINISHED"}' }],
      closeBatch: undefined,
      now,
    })
  const interrupt = (id: string, toolCallId: string): Interrupt => ({ id, reason: 'tool_call', toolCallId })
  const batchFor = (threadId: string, runId: string, batchId: string): NewBatch => ({
    batchId,
    threadId,
    runId,
    interrupts: [{ interrupt: interrupt(`${batchId}-i1`, 'c1'), kind: 'approval', toolCallId: 'c1', toolName: 'deploy' }],
    createdAt: now,
    expiresAt: now + 1000,
  })

  describe(`Store conformance: ${name}`, () => {
    async function withStore(fn: (store: Store) => Promise<void>): Promise<void> {
      const { store, dispose } = await open()
      try {
        await fn(store)
      } finally {
        await dispose()
      }
    }

    it('creates a thread with the first input run; a second run is refused while one is active', () =>
      withStore(async (store) => {
        const { threadId, runId } = ids()
        const started = await start(store, threadId, runId)
        expect(started.ok).toBe(true)
        const thread = await store.getThread(threadId)
        expect(thread).toMatchObject({ ownerId: 'alice', status: 'running', activeRunId: runId, state: { n: 0 }, lastSeq: 0 })
        expect(await start(store, threadId, 'other')).toEqual({ ok: false, reason: 'thread_exists' })
        expect(await start(store, threadId, 'other', thread!.revision)).toEqual({ ok: false, reason: 'busy' })
        expect(await store.listMessages(threadId)).toEqual([{ id: `u-${runId}`, role: 'user', content: 'hi' }])
        expect(await store.getRun(threadId, runId)).toMatchObject({ kind: 'input', status: 'running' })
      }))

    it('appends events with strictly increasing per-thread seq, readable by run and after a cursor', () =>
      withStore(async (store) => {
        const { threadId, runId } = ids()
        await start(store, threadId, runId)
        const a = await store.appendEvents(threadId, runId, [
          { type: 'RUN_STARTED', json: '{"a":1}' },
          { type: 'TEXT_MESSAGE_START', json: '{"a":2}' },
        ])
        const b = await store.appendEvents(threadId, runId, [{ type: 'TEXT_MESSAGE_END', json: '{"a":3}' }])
        expect([...a, ...b].map((e) => e.seq)).toEqual([1, 2, 3])
        expect((await store.readEvents(threadId, { afterSeq: 1 })).map((e) => e.json)).toEqual(['{"a":2}', '{"a":3}'])
        expect((await store.readEvents(threadId, { runId: 'nope' })).length).toBe(0)
        const stored = await finish(store, threadId, runId)
        expect(stored.map((e) => e.seq)).toEqual([4])
        expect(await store.getThread(threadId)).toMatchObject({ status: 'idle', activeRunId: undefined, lastSeq: 4 })
      }))

    it('a stale revision is refused (optimistic concurrency for input admission)', () =>
      withStore(async (store) => {
        const { threadId, runId } = ids()
        await start(store, threadId, runId)
        await finish(store, threadId, runId)
        const thread = (await store.getThread(threadId))!
        expect(await start(store, threadId, 'r-stale', thread.revision - 1)).toEqual({ ok: false, reason: 'revision_changed' })
        expect((await start(store, threadId, 'r-next', thread.revision)).ok).toBe(true)
      }))

    it('claims a batch exactly once (conditional update), then reports who claimed it', () =>
      withStore(async (store) => {
        const { threadId, runId } = ids()
        await start(store, threadId, runId)
        await store.createBatch(batchFor(threadId, runId, `b-${threadId}`))
        expect(await store.getThread(threadId)).toMatchObject({ status: 'interrupted' })
        await finish(store, threadId, runId)
        expect(await store.getThread(threadId)).toMatchObject({ status: 'interrupted', activeRunId: undefined })
        const thread = (await store.getThread(threadId))!
        expect(await start(store, threadId, 'r-input', thread.revision)).toEqual({ ok: false, reason: 'interrupted' })
        const open = (await store.getOpenBatch(threadId))!
        expect(open.interrupts.map((i) => i.interrupt.id)).toEqual([`b-${threadId}-i1`])
        const claim = (runId2: string, hash: string) =>
          store.claimBatch({ threadId, batchId: open.batchId, runId: runId2, decisionHash: hash, decision: [], now })
        const results = await Promise.all([claim('r-a', 'h1'), claim('r-b', 'h1'), claim('r-c', 'h2')])
        expect(results.filter((r) => r.ok)).toHaveLength(1)
        const winner = ['r-a', 'r-b', 'r-c'][results.findIndex((r) => r.ok)]
        for (const r of results) if (!r.ok) expect(r).toMatchObject({ reason: 'already_claimed', claimedByRunId: winner })
        expect(await store.getOpenBatch(threadId)).toBeUndefined()
        expect(await store.getBatchOfInterrupt(threadId, `b-${threadId}-i1`)).toMatchObject({ status: 'claimed', claimedByRunId: winner })
        expect(await store.getRun(threadId, winner!)).toMatchObject({ kind: 'resume', status: 'running' })
      }))

    it('the effects ledger starts a call at most once and settles it with its message and state atomically', () =>
      withStore(async (store) => {
        const { threadId, runId } = ids()
        await start(store, threadId, runId)
        await store.insertToolCalls([
          { threadId, toolCallId: 'c1', runId, messageId: 'a1', toolName: 'deploy', argsText: '{}', kind: 'server', status: 'pending', now },
        ])
        expect(await store.beginEffect(threadId, 'c1', runId, now)).toBe(true)
        expect(await store.beginEffect(threadId, 'c1', 'r-other', now)).toBe(false)
        expect(await store.getToolCall(threadId, 'c1')).toMatchObject({ status: 'started' })
        await store.settleToolCall({
          threadId,
          runId,
          toolCallId: 'c1',
          status: 'succeeded',
          result: '"ok"',
          message: { id: 'tm1', role: 'tool', toolCallId: 'c1', content: '"ok"' },
          state: { n: 1 },
          now,
        })
        expect(await store.getToolCall(threadId, 'c1')).toMatchObject({ status: 'succeeded', result: '"ok"' })
        expect((await store.getThread(threadId))!.state).toEqual({ n: 1 })
        expect((await store.listMessages(threadId)).map((m) => m.id)).toEqual([`u-${runId}`, 'tm1'])
        expect(await store.listToolCalls(threadId, { status: ['started'] })).toEqual([])
      }))

    it('messages are append-only: a known id cannot be written twice', () =>
      withStore(async (store) => {
        const { threadId, runId } = ids()
        await start(store, threadId, runId)
        await expect(store.appendMessages(threadId, runId, [{ id: `u-${runId}`, role: 'user', content: 'again' }])).rejects.toThrow()
        expect(await store.listMessages(threadId)).toHaveLength(1)
      }))

    it('recovers runs abandoned by a dead process', () =>
      withStore(async (store) => {
        const { threadId, runId } = ids()
        await start(store, threadId, runId)
        const recovered = await store.recoverAbandonedRuns(now, () => ({ type: 'RUN_ERROR', json: '{"type":"RUN_ERROR"}' }))
        expect(recovered).toContainEqual({ threadId, runId })
        expect(await store.getRun(threadId, runId)).toMatchObject({ status: 'failed' })
        expect(await store.getThread(threadId)).toMatchObject({ status: 'idle', activeRunId: undefined })
        expect((await store.readEvents(threadId, {})).map((e) => e.type)).toEqual(['RUN_ERROR'])
      }))

    it('reads the admission view from one snapshot', () =>
      withStore(async (store) => {
        const { threadId, runId } = ids()
        expect(await store.getAdmissionView(threadId, runId, { history: true })).toBeUndefined()
        await start(store, threadId, runId)
        await store.insertToolCalls([
          { threadId, toolCallId: 'ext', runId, messageId: 'a1', toolName: 'x', argsText: '{}', kind: 'client', status: 'awaiting_result', now },
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
      }))

    it('keeps one setting value once created', () =>
      withStore(async (store) => {
        const first = await store.getOrCreateSetting('k', () => 'v1')
        const second = await store.getOrCreateSetting('k', () => 'v2')
        expect([first, second]).toEqual(['v1', 'v1'])
        await store.ping()
      }))
  })
}
