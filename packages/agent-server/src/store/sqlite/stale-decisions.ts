import type Database from 'better-sqlite3'
import type { DecisionRecord } from '@interlude/protocol'
import type { DecisionRow } from '../rows.ts'
import { toDecision } from '../rows.ts'
import { withStaleInterrupt } from '../stale-decisions.ts'

/** The SQLite statements of stale approvals (`../stale-decisions.ts`). */
export function prepareStaleDecisions(db: Database.Database) {
  const get = db.prepare<
    [string, string],
    DecisionRow
  >(`SELECT *, (SELECT b.run_id FROM interrupt_batches b WHERE b.batch_id = decisions.batch_id) AS batch_run_id
     FROM decisions WHERE thread_id = ? AND run_id = ?`)
  const set = db.prepare<[string, string, string]>(
    'UPDATE decisions SET stale_interrupt_ids = ? WHERE thread_id = ? AND run_id = ?',
  )
  return {
    /** Call inside the write transaction, after the fence. */
    mark(threadId: string, runId: string, interruptId: string): DecisionRecord | undefined {
      const row = get.get(threadId, runId)
      if (!row) return undefined
      const next = withStaleInterrupt(row.stale_interrupt_ids, interruptId)
      if (next === undefined) return toDecision(row)
      set.run(next, threadId, runId)
      return toDecision({ ...row, stale_interrupt_ids: next })
    },
  }
}
