import type { PermissionRule } from '@interlude/protocol'
import { expect, it } from 'vitest'
import { threadKey } from '../thread-key.ts'
import type { ConformanceKit } from './kit.ts'

/**
 * Threads per owner (docs/decisions.md#threads-keyed-per-owner, src/store/thread-key.ts): the server keys alice's
 * `support` and bob's `support` differently, and the store keeps the two keys apart in every table — the same run ids,
 * message ids and tool call ids on both, each run, pause, decision, replay, list and cancel touching only its own.
 */
export function ownerCases(kit: ConformanceKit): void {
  const { withDb, start, finish, batchFor, call, claimer, lease, now } = kit

  it('two owners’ threads with one client id are independent: run, pause, decide, replay, list, cancel', () =>
    withDb(async (store) => {
      const alice = threadKey('alice', 'support')
      const bob = threadKey('bob', 'support')
      // Bob takes the id first; alice's thread is created all the same.
      expect((await start(store, bob, 'r1', null, { ownerId: 'bob' })).ok).toBe(true)
      expect((await start(store, alice, 'r1', null, { ownerId: 'alice' })).ok).toBe(true)
      expect((await store.getThread(alice))?.ownerId).toBe('alice')
      expect((await store.getThread(bob))?.ownerId).toBe('bob')
      expect(await store.getThread('support')).toBeUndefined()

      // Both pause on a call with the same id; each batch belongs to its own thread.
      for (const [key, batchId] of [
        [alice, 'b-alice'],
        [bob, 'b-bob'],
      ] as const) {
        await store.insertToolCalls([call(key, 'r1', 'c1', 'awaiting_decision')])
        await store.appendEvents(key, 'r1', [{ type: 'RUN_STARTED', json: JSON.stringify({ owner: key }) }])
        await store.createBatch(batchFor(key, 'r1', batchId))
        await finish(store, key, 'r1', { status: 'interrupted', outcome: { type: 'interrupt', interrupts: [] } })
      }
      expect((await store.getOpenBatch(alice))?.batchId).toBe('b-alice')
      expect((await store.getOpenBatch(bob))?.batchId).toBe('b-bob')
      expect(await store.getBatchOfInterrupt(alice, 'b-bob-i1')).toBeUndefined()
      const pending = await store.listPendingBatches({ limit: 10 })
      expect(pending.map((b) => [b.threadId, b.ownerId]).sort()).toEqual([
        [alice, 'alice'],
        [bob, 'bob'],
      ])

      // Alice decides hers; bob's stays open and untouched.
      const claim = await store.claimBatch({
        threadId: alice,
        batchId: 'b-alice',
        runId: 'r2',
        decisionHash: 'h',
        decision: [],
        now,
        ...claimer,
      })
      expect(claim.ok).toBe(true)
      expect((await store.getThread(alice))?.status).toBe('running')
      expect((await store.getThread(bob))?.status).toBe('interrupted')
      expect((await store.getOpenBatch(bob))?.status).toBe('pending')
      expect((await store.listDecisions(alice)).map((d) => d.runId)).toEqual(['r2'])
      expect(await store.listDecisions(bob)).toEqual([])

      // A cancel of alice's run r2 does not reach a run of bob's with the same id.
      expect((await store.requestCancel(bob, 'r2', now))?.cancelRequested ?? false).toBe(false)
      expect((await store.requestCancel(alice, 'r2', now))?.cancelRequested).toBe(true)
      expect(await store.getRun(bob, 'r2')).toBeUndefined()

      // Effects ledger and history stay per thread.
      expect(await store.beginEffect(bob, 'c1', 'r2', now)).toBe('not_active')
      expect((await store.getToolCall(bob, 'c1'))?.status).toBe('awaiting_decision')
      expect((await store.listMessagePage(alice, { limit: 10, maxBytes: 1 << 20 })).map((m) => m.message.id)).toEqual([
        'u-r1',
      ])
      expect((await store.listMessagePage(bob, { limit: 10, maxBytes: 1 << 20 })).map((m) => m.message.id)).toEqual([
        'u-r1',
      ])

      // Replay reads only its own log; the live-tail poll answers per key.
      const aliceLog = await store.readEvents(alice, {})
      const bobLog = await store.readEvents(bob, {})
      expect(aliceLog.map((e) => e.json)).toContain(JSON.stringify({ owner: alice }))
      expect(bobLog.map((e) => e.json)).not.toContain(JSON.stringify({ owner: alice }))
      const heads = await store.pollThreads([alice, bob])
      expect(new Map(heads.map((h) => [h.threadId, h.activeRunId]))).toEqual(
        new Map([
          [alice, 'r2'],
          [bob, undefined],
        ]),
      )

      // Each owner lists only its own thread.
      expect((await store.listThreads('alice', { limit: 10 })).map((t) => t.threadId)).toEqual([alice])
      expect((await store.listThreads('bob', { limit: 10 })).map((t) => t.threadId)).toEqual([bob])

      // Bob's thread goes on with new input after his own decision, alice's run meanwhile finishes.
      await finish(store, alice, 'r2', { closeBatch: { batchId: 'b-alice', status: 'resolved' } })
      const bobClaim = await store.claimBatch({
        threadId: bob,
        batchId: 'b-bob',
        runId: 'r2',
        decisionHash: 'h',
        decision: [],
        now,
        ...lease,
        decidedBy: 'bob',
        via: 'run',
      })
      expect(bobClaim.ok).toBe(true)
      expect((await store.getDecision(bob, 'r2'))?.decidedBy).toBe('bob')
      expect((await store.getDecision(alice, 'r2'))?.decidedBy).toBe('alice')
      expect((await store.getThread(alice))?.status).toBe('idle')
    }))

  it('a thread-scoped permission rule names the client id and applies only to its owner’s thread', () =>
    withDb(async (store) => {
      const rule: PermissionRule = {
        ruleId: 'rule-alice',
        owner: 'alice',
        scope: 'thread',
        threadId: 'support',
        toolName: 'deploy',
        createdBy: 'alice',
        createdAt: new Date(now).toISOString(),
        sourceInterruptId: 'i1',
      }
      await store.addPermissionRule(rule)
      const match = (owner: string) =>
        store.matchPermissionRules({ owner, threadId: 'support', toolName: 'deploy', argsKey: null })
      expect((await match('alice')).map((r) => r.ruleId)).toEqual(['rule-alice'])
      expect(await match('bob')).toEqual([])
      expect(await store.listPermissionRules('bob', { threadId: 'support' })).toEqual([])
    }))
}
