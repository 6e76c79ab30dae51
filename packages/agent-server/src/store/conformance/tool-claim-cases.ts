import { expect, it } from 'vitest'
import type { ConformanceKit } from './kit.ts'

/**
 * Browser work claimed before it runs, and results that settle a call once (docs/client-contract.md#browser-tools,
 * docs/protocol.md#external-results). The claim is one conditional update: across connections (replicas), many
 * claims at once end with exactly one winner.
 */
export function toolClaimCases(kit: ConformanceKit): void {
  const { withDb, ids, start, finish, call, toolMessage, now } = kit

  /** A thread whose first run ended waiting for the browser call `b1` and the external call `x1`. */
  const waiting = async (store: Parameters<Parameters<typeof withDb>[0]>[0]) => {
    const { threadId, runId } = ids()
    await start(store, threadId, runId)
    await store.insertToolCalls([
      call(threadId, runId, 'b1', 'awaiting_result', 'client'),
      call(threadId, runId, 'x1', 'awaiting_result', 'external'),
      call(threadId, runId, 's1', 'pending', 'server'),
    ])
    await finish(store, threadId, runId, { outcome: { type: 'success', pendingToolCallIds: ['b1', 'x1'] } })
    return threadId
  }

  it('claims a waiting browser call once: the same claim again is ok, another is taken, nothing else is claimable', () =>
    withDb(async (store, db) => {
      const threadId = await waiting(store)
      const revision = (await store.getThread(threadId))!.revision
      const claim = (toolCallId: string, claimId: string) => store.claimToolCall({ threadId, toolCallId, claimId, now })
      expect(await claim('b1', 'tab-a')).toEqual({ ok: true })
      expect(await claim('b1', 'tab-a')).toEqual({ ok: true })
      const other = await db.connect()
      expect(await other.claimToolCall({ threadId, toolCallId: 'b1', claimId: 'tab-b', now })).toEqual({
        ok: false,
        reason: 'taken',
      })
      expect(await store.getToolCall(threadId, 'b1')).toMatchObject({
        status: 'awaiting_result',
        attemptRunId: 'tab-a',
        startedAt: now,
      })
      // An external call, a server call, a missing call and another thread's call are not a browser's to claim.
      for (const [id, thread] of [
        ['x1', threadId],
        ['s1', threadId],
        ['nope', threadId],
        ['b1', 'another-thread'],
      ] as const)
        expect(await store.claimToolCall({ threadId: thread, toolCallId: id, claimId: 'tab-a', now })).toEqual({
          ok: false,
          reason: 'not_claimable',
        })
      // A ledger-only write: the thread's revision does not move.
      expect((await store.getThread(threadId))!.revision).toBe(revision)
    }))

  it('many claims at once from several connections: exactly one wins', () =>
    withDb(async (store, db) => {
      const threadId = await waiting(store)
      const stores = [store, await db.connect(), await db.connect()]
      const results = await Promise.all(
        Array.from({ length: 24 }, (_, i) =>
          stores[i % stores.length]!.claimToolCall({ threadId, toolCallId: 'b1', claimId: `tab-${i}`, now }),
        ),
      )
      const winners = results.flatMap((r, i) => (r.ok ? [`tab-${i}`] : []))
      expect(winners).toHaveLength(1)
      for (const r of results) if (!r.ok) expect(r.reason).toBe('taken')
      expect((await store.getToolCall(threadId, 'b1'))?.attemptRunId).toBe(winners[0])
    }))

  it('a settled browser call is no longer claimable; results for the same calls at once settle them once', () =>
    withDb(async (store, db) => {
      const threadId = await waiting(store)
      expect((await store.claimToolCall({ threadId, toolCallId: 'b1', claimId: 'tab-a', now })).ok).toBe(true)
      const revision = (await store.getThread(threadId))!.revision
      const other = await db.connect()
      // Two result sets at the same revision: the store admits one, the other is refused and writes nothing.
      const results = await Promise.all(
        [store, other].map((s, i) =>
          start(s, threadId, `r-result-${i}`, revision, {
            messages: [toolMessage(`tm-${i}`, 'x1', `"first-${i}"`), toolMessage(`tb-${i}`, 'b1', `"b-${i}"`)],
            toolResults: [
              { toolCallId: 'x1', status: 'succeeded', result: `"first-${i}"` },
              { toolCallId: 'b1', status: 'succeeded', result: `"b-${i}"` },
            ],
          }),
        ),
      )
      expect(results.filter((r) => r.ok)).toHaveLength(1)
      const winner = results.findIndex((r) => r.ok)
      expect(await store.getToolCall(threadId, 'x1')).toMatchObject({
        status: 'succeeded',
        result: `"first-${winner}"`,
      })
      expect(await store.getToolCall(threadId, 'b1')).toMatchObject({ status: 'succeeded', attemptRunId: 'tab-a' })
      const tools = (await store.listMessages(threadId)).filter((m) => m.role === 'tool')
      expect(tools.map((m) => m.id)).toEqual([`tm-${winner}`, `tb-${winner}`])
      expect(await store.claimToolCall({ threadId, toolCallId: 'b1', claimId: 'tab-b', now })).toEqual({
        ok: false,
        reason: 'not_claimable',
      })
    }))

  it('a new message may leave an external call unknown; it is then an unsettled effect, not claimable', () =>
    withDb(async (store) => {
      const threadId = await waiting(store)
      const revision = (await store.getThread(threadId))!.revision
      const started = await start(store, threadId, 'r-next', revision, {
        messages: [toolMessage('tm-x', 'x1', '{"status":"unknown"}'), { id: 'u-2', role: 'user', content: 'next' }],
        toolResults: [{ toolCallId: 'x1', status: 'unknown', result: '{"status":"unknown"}' }],
      })
      expect(started.ok).toBe(true)
      expect(await store.getToolCall(threadId, 'x1')).toMatchObject({ status: 'unknown' })
      expect((await store.listToolCalls(threadId, { status: ['unknown'] })).map((c) => c.toolCallId)).toEqual(['x1'])
      expect(
        await store.reconcileEffect({ threadId, toolCallId: 'x1', status: 'succeeded', result: '"late"', now }),
      ).toBe(true)
    }))
}
