import { expect, it } from 'vitest'
import type { ClaimBatchRequest, ClaimBatchResult, Store } from '../store.ts'
import type { ConformanceKit } from './kit.ts'

/**
 * Decision links (docs/approvals.md#deciding-outside-the-app): a claim that spends a link records its use in the
 * claim's transaction; a second use is refused (`link_used`) on any connection and writes nothing; a refused claim
 * leaves the link unused.
 */
export function decisionLinkCases(kit: ConformanceKit): void {
  const { withDb, paused, now, claimer } = kit

  const claimWith =
    (store: Store, threadId: string, batchId: string) =>
    (runId: string, extra: Partial<ClaimBatchRequest> = {}): Promise<ClaimBatchResult> =>
      store.claimBatch({
        threadId,
        batchId,
        runId,
        decisionHash: 'h',
        decision: [],
        now,
        ...claimer,
        decidedBy: 'mgr',
        via: 'link',
        ...extra,
      })

  it('a claim with a link records the use with the decision; the link never decides again', () =>
    withDb(async (store, db) => {
      const { threadId, batchId } = await paused(store)
      expect(await store.decisionLinks.used('lnk_1')).toBeUndefined()
      const claim = claimWith(store, threadId, batchId)
      expect((await claim('r-link', { linkId: 'lnk_1' })).ok).toBe(true)
      expect(await store.decisionLinks.used('lnk_1')).toEqual({
        linkId: 'lnk_1',
        threadId,
        runId: 'r-link',
        decidedBy: 'mgr',
        usedAt: now,
      })
      expect((await store.getDecision(threadId, 'r-link'))?.via).toBe('link')
      // Another connection (a replica) sees the use, and its second claim with the link writes nothing.
      const other = await db.connect()
      expect((await other.decisionLinks.used('lnk_1'))?.runId).toBe('r-link')
      const second = await paused(store)
      const revision = (await store.getThread(second.threadId))!.revision
      const again = claimWith(other, second.threadId, second.batchId)
      expect(await again('r-again', { linkId: 'lnk_1' })).toEqual({ ok: false, reason: 'link_used' })
      expect((await store.getOpenBatch(second.threadId))?.batchId).toBe(second.batchId)
      expect(await store.getDecision(second.threadId, 'r-again')).toBeUndefined()
      expect((await store.getThread(second.threadId))!.revision).toBe(revision)
    }))

  it('a refused claim leaves its link unused', () =>
    withDb(async (store) => {
      const { threadId, batchId } = await paused(store)
      const claim = claimWith(store, threadId, batchId)
      expect((await claim('r-first')).ok).toBe(true)
      expect((await claim('r-late', { linkId: 'lnk_late' })).ok).toBe(false)
      expect(await store.decisionLinks.used('lnk_late')).toBeUndefined()
    }))

  it('two connections spending one link at once: exactly one claim wins', () =>
    withDb(async (store, db) => {
      const other = await db.connect()
      const a = await paused(store)
      const b = await paused(store)
      const results = await Promise.all([
        claimWith(store, a.threadId, a.batchId)('r-a', { linkId: 'lnk_race' }),
        claimWith(other, b.threadId, b.batchId)('r-b', { linkId: 'lnk_race' }),
      ])
      expect(results.filter((r) => r.ok)).toHaveLength(1)
      expect(results.filter((r) => !r.ok)).toEqual([{ ok: false, reason: 'link_used' }])
      const used = await store.decisionLinks.used('lnk_race')
      expect(used?.runId).toBe(results[0]!.ok ? 'r-a' : 'r-b')
    }))
}
