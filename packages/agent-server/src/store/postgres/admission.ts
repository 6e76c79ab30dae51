import type { ClaimBatchRequest, ClaimBatchResult, StartInputRunRequest, StartRunResult } from '../store.ts'
import { toThread } from '../rows.ts'
import { claimRefusal, startRefusal } from '../refusals.ts'
import { RollbackWith } from '../rollback-with.ts'
import * as sql from './admission-statements.ts'
import { appendMessagesTx } from './appends.ts'
import type { Queryable } from './query.ts'
import { rows } from './query.ts'
import { getThread, setTitleIfAbsent, settleToolCall } from './statements.ts'

/**
 * The two admission writes of the PostgreSQL store, on its admission pool: the conditional
 * statements decide, not process memory. A refusal found after something was written throws
 * `RollbackWith` (`transaction.ts` rolls back), so nothing stays behind.
 */

/** The body of one transaction (`q` is inside it). */
export async function startInputRunTx(q: Queryable, request: StartInputRunRequest): Promise<StartRunResult> {
  const { threadId, runId, now, expectedRevision } = request
  if (expectedRevision === null) {
    if ((await q.query(sql.insertThread(request))).rowCount === 0) return { ok: false, reason: 'thread_exists' }
  } else if ((await q.query(sql.claimThreadForInput({ ...request, expectedRevision }))).rowCount === 0) {
    return startRefusal((await rows(q, getThread(threadId)))[0], expectedRevision)
  }
  if ((await q.query(sql.insertInputRun(request))).rowCount === 0)
    throw new RollbackWith<StartRunResult>({ ok: false, reason: 'run_exists' })
  await appendMessagesTx(q, threadId, runId, request.messages, now)
  // A thread created without a user message gets its title from the first one (docs/decisions.md#bounded-histories:
  // stored, never derived).
  if (expectedRevision !== null && request.title !== undefined) await q.query(setTitleIfAbsent(threadId, request.title))
  for (const r of request.toolResults) {
    await q.query(settleToolCall(threadId, r.toolCallId, { status: r.status, result: r.result, now }))
  }
  return { ok: true, thread: toThread((await rows(q, getThread(threadId)))[0]!) }
}

/** One statement, all or nothing (no transaction needed); a refusal is explained from the batch. */
export async function claimBatch(q: Queryable, request: ClaimBatchRequest): Promise<ClaimBatchResult> {
  // A taken run id fails the statement with a unique violation on the run (or on its decision
  // record, whichever insert comes first): nothing is written. Any other violation is an error.
  const claimed = await rows(q, sql.claimBatch(request)).catch((error: unknown) => {
    const { code, constraint } = error as { code?: string; constraint?: string }
    if (code === '23505' && (constraint === 'runs_pkey' || constraint === 'decisions_pkey')) return undefined
    throw error
  })
  if (claimed === undefined) return { ok: false, reason: 'run_exists' }
  const thread = claimed[0]?.thread
  if (thread) return { ok: true, thread: toThread(thread) }
  return claimRefusal((await rows(q, sql.getBatch(request.threadId, request.batchId)))[0])
}
