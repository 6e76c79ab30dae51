import type { DecisionRecord } from '@interlude/protocol'
import type { DecisionRow } from '../rows.ts'
import { toDecision } from '../rows.ts'
import { withStaleInterrupt } from '../stale-decisions.ts'
import type { Queryable } from './query.ts'
import { fenced, statement } from './query.ts'
import { lockIfActive } from './statements.ts'

/** Inside a transaction: fenced by the thread row's lock, which also serialises two marks of one record. */
export async function markDecisionStaleTx(
  q: Queryable,
  threadId: string,
  runId: string,
  interruptId: string,
): Promise<DecisionRecord | undefined> {
  await fenced(q, lockIfActive(threadId, runId), threadId, runId)
  const { rows } = await q.query<DecisionRow>(
    statement(
      'SELECT *, (SELECT b.run_id FROM interrupt_batches b WHERE b.batch_id = decisions.batch_id) AS batch_run_id FROM decisions WHERE thread_id = $1 AND run_id = $2',
      [threadId, runId],
    ),
  )
  const row = rows[0]
  if (!row) return undefined
  const next = withStaleInterrupt(row.stale_interrupt_ids, interruptId)
  if (next === undefined) return toDecision(row)
  await q.query(
    statement('UPDATE decisions SET stale_interrupt_ids = $1 WHERE thread_id = $2 AND run_id = $3', [
      next,
      threadId,
      runId,
    ]),
  )
  return toDecision({ ...row, stale_interrupt_ids: next })
}
