import { expect, it } from 'vitest'
import { RunNotActiveError } from '../store.ts'
import type { ConformanceKit } from './kit.ts'

/** Stale approvals (docs/approvals.md#stale-approvals): the outcome added to a decision record by its run. */
export function staleDecisionCases(kit: ConformanceKit): void {
  const { withDb, ids, start, finish, interrupt, now, claimer } = kit

  it('marks approvals of a decision stale once each, only while the run is the thread’s active run', () =>
    withDb(async (store, db) => {
      const { threadId, runId } = ids()
      const batchId = `b-${threadId}`
      await start(store, threadId, runId)
      await store.createBatch({
        ...kit.batchFor(threadId, runId, batchId),
        interrupts: [{ interrupt: interrupt('i1', 'c1'), kind: 'approval', toolCallId: 'c1', toolName: 'deploy' }],
      })
      await finish(store, threadId, runId, { status: 'interrupted', outcome: { type: 'interrupt', interrupts: [] } })
      const entries = [{ interruptId: 'i1', status: 'resolved' as const, payload: { approved: true } }]
      const won = await store.claimBatch({
        threadId,
        batchId,
        runId: 'r-resume',
        decisionHash: 'h',
        decision: entries,
        now,
        ...claimer,
      })
      expect(won.ok).toBe(true)
      const plain = await store.getDecision(threadId, 'r-resume')
      expect(plain?.outcome).toBeUndefined()

      const marked = await store.markDecisionStale(threadId, 'r-resume', 'i1')
      expect(marked).toEqual({ ...plain, outcome: 'stale', staleInterruptIds: ['i1'] })
      // Once per interrupt: a continuation marking it again changes nothing.
      expect(await store.markDecisionStale(threadId, 'r-resume', 'i1')).toEqual(marked)
      const other = await db.connect()
      expect(await other.getDecision(threadId, 'r-resume')).toEqual(marked)
      expect(await other.listDecisions(threadId)).toEqual([marked])

      await expect(store.markDecisionStale(threadId, 'not-active', 'i1')).rejects.toBeInstanceOf(RunNotActiveError)
      await finish(store, threadId, 'r-resume')
      await expect(store.markDecisionStale(threadId, 'r-resume', 'i2')).rejects.toBeInstanceOf(RunNotActiveError)
      expect(await store.getDecision(threadId, 'r-resume')).toEqual(marked)
    }))
}
