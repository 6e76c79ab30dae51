import type pg from 'pg'
import type { PgDatabase } from './database.ts'
import type { ClaimBatchRequest, ClaimBatchResult, NewEvent, StoredEvent, VoteWrite } from '../store.ts'
import type { BatchRow } from '../rows.ts'
import { toThread } from '../rows.ts'
import { claimRefusal } from '../refusals.ts'
import { RollbackWith } from '../rollback-with.ts'
import { OPEN_BATCH_STATUS } from '../statuses.ts'
import { sqlString } from '../sql-literals.ts'
import * as sql from './admission-statements.ts'
import { claimBatch } from './admission.ts'
import { claimWithLinkTx } from './decision-links.ts'
import { claimWithGrantsTx } from './grants.ts'
import { insertOutbox } from './approval-statements.ts'
import { interruptIdsOf } from './approval-statements.ts'
import type { Queryable } from './query.ts'
import { rows, statement } from './query.ts'
import { getThread } from './statements.ts'

const OPEN_BATCH = sqlString(OPEN_BATCH_STATUS)

/** The thread row first (the store's one lock order), so a vote queues with the claims of its thread. */
const lockThread = (threadId: string) => statement('SELECT 1 FROM threads WHERE thread_id = $1 FOR UPDATE', [threadId])

/** One more vote, only while the open batch holds exactly the votes the voter was judged against. */
const countVote = (request: ClaimBatchRequest, expectedVotes: number) =>
  statement(
    `UPDATE interrupt_batches SET vote_count = vote_count + 1
     WHERE batch_id = $1 AND thread_id = $2 AND status = ${OPEN_BATCH} AND vote_count = $3`,
    [request.batchId, request.threadId, expectedVotes],
  )

const insertVoteDecision = (request: ClaimBatchRequest, vote: VoteWrite) =>
  statement(
    `INSERT INTO decisions (thread_id, run_id, batch_id, interrupt_ids, entries, decided_by, via, decided_at, vote_kind, vote_stage)
     VALUES ($1, $2, $3, ${interruptIdsOf('$3')}, $4, $5, $6, $7, $8, $9) ON CONFLICT DO NOTHING`,
    [
      request.threadId,
      request.runId,
      request.batchId,
      JSON.stringify(request.decision),
      request.decidedBy,
      request.via,
      request.now,
      vote.kind,
      vote.stage,
    ],
  )

const markVoteDecision = (request: ClaimBatchRequest, vote: VoteWrite) =>
  statement('UPDATE decisions SET vote_kind = $3, vote_stage = $4 WHERE thread_id = $1 AND run_id = $2', [
    request.threadId,
    request.runId,
    vote.kind,
    vote.stage,
  ])

/**
 * A vote's write in the PostgreSQL store (docs/approvals.md#organisation-policies), the body of one transaction: the
 * thread row is locked first, then the batch's vote count is the condition — of two votes judged against the same
 * count one is written, the other judged again (on any replica). A settling vote is then the ordinary claim.
 */
export async function voteTx(
  q: Queryable,
  request: ClaimBatchRequest & { readonly vote: VoteWrite },
): Promise<ClaimBatchResult> {
  const { vote } = request
  await q.query(lockThread(request.threadId))
  // A reminder is no vote: it needs the batch open, not a count.
  const counted =
    vote.kind === 'reminder'
      ? (await rows(q, sql.getBatch(request.threadId, request.batchId)))[0]?.status === OPEN_BATCH_STATUS
      : (await q.query(countVote(request, vote.expectedVotes))).rowCount === 1
  if (!counted) {
    const batch: BatchRow | undefined = (await rows(q, sql.getBatch(request.threadId, request.batchId)))[0]
    return batch?.status === OPEN_BATCH_STATUS ? { ok: false, reason: 'votes_changed' } : claimRefusal(batch)
  }
  if (vote.settles) {
    const claimed = await claimBatch(q, request)
    if (!claimed.ok) throw new RollbackWith(claimed)
    await q.query(markVoteDecision(request, vote))
    return claimed
  }
  if ((await q.query(insertVoteDecision(request, vote))).rowCount === 0)
    throw new RollbackWith<ClaimBatchResult>({ ok: false, reason: 'run_exists' })
  if (request.outbox !== undefined && request.outbox.length > 0)
    await q.query(insertOutbox(request.outbox, request.now))
  const events = vote.events === undefined ? undefined : await voteRunTx(q, request, vote.events, vote.outcomeJson)
  const thread = toThread((await rows(q, getThread(request.threadId)))[0]!)
  return { ok: true, thread, ...(events ? { events } : {}) }
}

/**
 * The short run of a vote that settles nothing (`VoteWrite.events`) in the paused thread's log: its run row, then its
 * events after the log's head (the thread row is locked; no run is active while the batch is open).
 */
async function voteRunTx(
  q: Queryable,
  request: ClaimBatchRequest,
  events: readonly NewEvent[],
  outcomeJson = '{}',
): Promise<StoredEvent[] | undefined> {
  const { threadId, runId, now } = request
  if (events.length === 0) return undefined
  const head = await rows<{ last_seq: string | number }>(
    q,
    statement(
      'UPDATE threads SET last_seq = last_seq + $2 WHERE thread_id = $1 AND active_run_id IS NULL RETURNING last_seq',
      [threadId, events.length],
    ),
  )
  // A run is active (it cannot be while the batch is open): the vote stands, its events are left out (as on SQLite).
  if (head[0] === undefined) return undefined
  const run = await q.query(
    statement(
      `INSERT INTO runs (thread_id, run_id, kind, status, outcome_json, created_at, finished_at)
       VALUES ($1, $2, 'resume', 'interrupted', $3, $4, $4) ON CONFLICT DO NOTHING`,
      [threadId, runId, outcomeJson, now],
    ),
  )
  if (run.rowCount === 0) throw new RollbackWith<ClaimBatchResult>({ ok: false, reason: 'run_exists' })
  const first = Number(head[0].last_seq) - events.length + 1
  await q.query(
    statement(
      `INSERT INTO events (thread_id, seq, run_id, type, json)
       SELECT $1, $3::bigint + e.ord - 1, $2, e.type, e.json
       FROM unnest($4::text[], $5::text[]) WITH ORDINALITY AS e(type, json, ord)`,
      [threadId, runId, first, events.map((e) => e.type), events.map((e) => e.json)],
    ),
  )
  return events.map((e, i) => ({ seq: first + i, runId, type: e.type, json: e.json }))
}

/**
 * A claim that is a transaction of its own: a vote (by decision link too), or one that spends a decision link or makes
 * grants (`grants.ts`; a vote makes none).
 */
export function soloClaimTx(q: Queryable, request: ClaimBatchRequest): Promise<ClaimBatchResult> {
  const { vote } = request
  if (vote === undefined) return claimWithGrantsTx(q, request)
  return claimWithLinkTx(q, request, (tx) => voteTx(tx, { ...request, vote }))
}

/** `soloClaimTx` in a transaction of its own on `pool`, for the claims that need one; `undefined` for any other. */
export function soloClaim(
  db: Pick<PgDatabase, 'tx' | 'notifier'>,
  pool: pg.Pool,
  request: ClaimBatchRequest,
): Promise<ClaimBatchResult> | undefined {
  const solo = request.vote !== undefined || request.linkId !== undefined || (request.grants?.length ?? 0) > 0
  if (!solo) return undefined
  return db
    .tx((q) => soloClaimTx(q, request), pool)
    .then((claimed) => {
      // A vote that settled nothing appended its short run to the log: announced after the commit.
      const last = claimed.ok ? claimed.events?.at(-1) : undefined
      if (last) db.notifier.announce(request.threadId, last.seq)
      return claimed
    })
}
