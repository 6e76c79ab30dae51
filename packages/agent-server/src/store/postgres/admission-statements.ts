import type { BatchRow, RunRow, ThreadRow, ToolCallRow } from '../rows.ts'
import type { AdmissionViewOptions, ClaimBatchRequest, StartInputRunRequest } from '../store.ts'
import { OPEN_BATCH_STATUS, OPEN_DELIVERY_STATUS } from '../statuses.ts'
import { sqlString } from '../sql-literals.ts'
import { statement } from './query.ts'
import { insertOutboxRows, interruptIdsOf, outboxColumns } from './approval-statements.ts'
import { BATCH_WITH_INTERRUPTS } from './statements.ts'
import type { BatchWithInterrupts } from './statements.ts'

/** The SQL of admission: what it reads in one snapshot and its two conditional writes. */

const OPEN_BATCH = sqlString(OPEN_BATCH_STATUS)

/** Everything admission reads, as one statement: one snapshot, one round trip. */
export const admissionView = (threadId: string, runId: string, options: AdmissionViewOptions) =>
  statement<{
    thread: ThreadRow | null
    run: RunRow | null
    batch: BatchWithInterrupts | null
    known_messages: string[] | null
    known_calls: string[] | null
    awaiting: ToolCallRow[] | null
  }>(
    `SELECT
       (SELECT row_to_json(t) FROM threads t WHERE t.thread_id = $1) AS thread,
       (SELECT row_to_json(r) FROM runs r WHERE r.thread_id = $1 AND r.run_id = $2) AS run,
       (SELECT row_to_json(x) FROM (${BATCH_WITH_INTERRUPTS} WHERE b.thread_id = $1 AND b.status = ${OPEN_BATCH}) x) AS batch,
       CASE WHEN $3 THEN (SELECT array_agg(m.message_id) FROM messages m
                          WHERE m.thread_id = $1 AND m.message_id = ANY($4::text[])) END AS known_messages,
       CASE WHEN $3 THEN (SELECT array_agg(c.tool_call_id) FROM tool_calls c
                          WHERE c.thread_id = $1 AND c.tool_call_id = ANY($5::text[])) END AS known_calls,
       CASE WHEN $3 THEN (SELECT json_agg(row_to_json(c) ORDER BY c.created_at, c.ordinal) FROM tool_calls c
                          WHERE c.thread_id = $1 AND c.status IN ('awaiting_result', 'pending')) END AS awaiting`,
    [threadId, runId, options.history, [...(options.messageIds ?? [])], [...(options.toolCallIds ?? [])]],
  )

/** A new thread, running its first run, at revision 1 (nothing when the id is taken). */
export const insertThread = (request: StartInputRunRequest) =>
  statement(
    `INSERT INTO threads (thread_id, owner_id, revision, status, state_json, active_run_id, last_seq, created_at, updated_at, title)
     VALUES ($1, $2, 1, 'running', $3, $4, 0, $5, $5, $6) ON CONFLICT (thread_id) DO NOTHING`,
    [
      request.threadId,
      request.ownerId,
      JSON.stringify(request.initialState ?? null),
      request.runId,
      request.now,
      request.title ?? null,
    ],
  )

/** The admission decision for input: same revision, no active run, no open batch. */
export const claimThreadForInput = (request: StartInputRunRequest & { readonly expectedRevision: number }) =>
  statement(
    `UPDATE threads SET active_run_id = $1, status = 'running', revision = revision + 1, updated_at = $2
     WHERE thread_id = $3 AND revision = $4 AND active_run_id IS NULL AND status = 'idle'`,
    [request.runId, request.now, request.threadId, request.expectedRevision],
  )

/** Nothing when the run id is taken. */
export const insertInputRun = (request: StartInputRunRequest) =>
  statement(
    `INSERT INTO runs (thread_id, run_id, kind, status, parent_run_id, created_at, executor_id, lease_until)
     VALUES ($1, $2, 'input', 'running', $3, $4, $5, $6) ON CONFLICT DO NOTHING`,
    [request.threadId, request.runId, request.parentRunId ?? null, request.now, request.executorId, request.leaseUntil],
  )

/**
 * The admission decision for a resume, all or nothing. The thread row is the arbiter: concurrent
 * claimers queue on its lock and re-check `active_run_id IS NULL` after the winner commits, so
 * exactly one takes the thread; only that one moves the batch from open to `claimed`, inserts the
 * run, its decision record (docs/approvals.md#decision-records) and the outbox rows — still one
 * statement, one round trip. A taken run id fails the whole statement (unique violation 23505,
 * nothing written).
 */
export const claimBatch = (request: ClaimBatchRequest) =>
  statement<{ thread: ThreadRow | null }>(
    `WITH thread AS (
       UPDATE threads SET active_run_id = $3, status = 'running', revision = revision + 1, updated_at = $4
       WHERE thread_id = $6 AND active_run_id IS NULL
         AND EXISTS (SELECT 1 FROM interrupt_batches WHERE batch_id = $5 AND thread_id = $6 AND status = ${OPEN_BATCH})
       RETURNING *
     ), claimed AS (
       UPDATE interrupt_batches SET status = 'claimed', decision_hash = $1, decision_json = $2, claimed_by_run_id = $3, claimed_at = $4
       WHERE batch_id = $5 AND thread_id = $6 AND status = ${OPEN_BATCH} AND EXISTS (SELECT 1 FROM thread)
       RETURNING batch_id
     ), run AS (
       INSERT INTO runs (thread_id, run_id, kind, status, batch_id, decision_hash, created_at, executor_id, lease_until)
       SELECT $6, $3, 'resume', 'running', batch_id, $1, $4, $7, $8 FROM claimed
       RETURNING run_id, batch_id
     ), decision AS (
       INSERT INTO decisions (thread_id, run_id, batch_id, interrupt_ids, entries, decided_by, via, decided_at)
       SELECT $6, run_id, batch_id, ${interruptIdsOf('run.batch_id')}, $2, $9, $10, $4 FROM run
     ), outbox AS (
       ${insertOutboxRows(11, '$4', 'WHERE EXISTS (SELECT 1 FROM run)')}
     )
     SELECT (SELECT row_to_json(t) FROM thread t WHERE EXISTS (SELECT 1 FROM run)) AS thread`,
    [
      request.decisionHash,
      JSON.stringify(request.decision),
      request.runId,
      request.now,
      request.batchId,
      request.threadId,
      request.executorId,
      request.leaseUntil,
      request.decidedBy,
      request.via,
      ...outboxColumns(request.outbox),
    ],
  )

/**
 * Several claims of different threads in one statement, one commit (`claim-groups.ts`): each decided and written
 * exactly as `claimBatch` would (the same conditions, per row), answered by its position in `requests` for those
 * admitted. The caller never puts two claims of one thread in a group. A taken run id fails the whole statement
 * (unique violation, nothing written), as for one claim.
 */
export const claimBatchGroup = (requests: readonly ClaimBatchRequest[]) => {
  const outbox = requests.flatMap((r, i) => (r.outbox ?? []).map((d) => ({ claim: i + 1, ...d })))
  return statement<{ ord: string; thread: ThreadRow }>(
    `WITH req AS (
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::text[],
                            $8::bigint[], $9::text[], $10::text[])
         WITH ORDINALITY AS r(thread_id, batch_id, run_id, hash, decision, now, executor_id, lease_until, decided_by, via, ord)
     ), thread AS (
       UPDATE threads t SET active_run_id = r.run_id, status = 'running', revision = t.revision + 1, updated_at = r.now
       FROM req r
       WHERE t.thread_id = r.thread_id AND t.active_run_id IS NULL
         AND EXISTS (SELECT 1 FROM interrupt_batches b
                     WHERE b.batch_id = r.batch_id AND b.thread_id = r.thread_id AND b.status = ${OPEN_BATCH})
       RETURNING t.*, r.ord AS claim_ord
     ), claimed AS (
       UPDATE interrupt_batches b SET status = 'claimed', decision_hash = r.hash, decision_json = r.decision,
         claimed_by_run_id = r.run_id, claimed_at = r.now
       FROM req r
       WHERE b.batch_id = r.batch_id AND b.thread_id = r.thread_id AND b.status = ${OPEN_BATCH}
         AND EXISTS (SELECT 1 FROM thread th WHERE th.claim_ord = r.ord)
       RETURNING b.batch_id, r.ord
     ), run AS (
       INSERT INTO runs (thread_id, run_id, kind, status, batch_id, decision_hash, created_at, executor_id, lease_until)
       SELECT r.thread_id, r.run_id, 'resume', 'running', c.batch_id, r.hash, r.now, r.executor_id, r.lease_until
       FROM claimed c JOIN req r ON r.ord = c.ord ORDER BY r.ord
       RETURNING run_id, batch_id, thread_id
     ), decision AS (
       INSERT INTO decisions (thread_id, run_id, batch_id, interrupt_ids, entries, decided_by, via, decided_at)
       SELECT r.thread_id, r.run_id, c.batch_id, ${interruptIdsOf('c.batch_id')}, r.decision, r.decided_by, r.via, r.now
       FROM claimed c JOIN req r ON r.ord = c.ord ORDER BY r.ord
     ), outbox AS (
       INSERT INTO webhook_outbox (delivery_id, endpoint, event_type, payload, status, attempts, created_at, next_attempt_at)
       SELECT o.id, o.endpoint, o.type, o.payload, ${sqlString(OPEN_DELIVERY_STATUS)}, 0, r.now, r.now
       FROM unnest($11::bigint[], $12::text[], $13::text[], $14::text[], $15::text[])
         WITH ORDINALITY AS o(claim, id, endpoint, type, payload, ord)
       JOIN req r ON r.ord = o.claim
       WHERE EXISTS (SELECT 1 FROM claimed c WHERE c.ord = o.claim) ORDER BY o.ord
     )
     SELECT th.claim_ord AS ord, row_to_json(th) AS thread FROM thread th
     WHERE EXISTS (SELECT 1 FROM run WHERE run.thread_id = th.thread_id)`,
    [
      requests.map((r) => r.threadId),
      requests.map((r) => r.batchId),
      requests.map((r) => r.runId),
      requests.map((r) => r.decisionHash),
      requests.map((r) => JSON.stringify(r.decision)),
      requests.map((r) => r.now),
      requests.map((r) => r.executorId),
      requests.map((r) => r.leaseUntil),
      requests.map((r) => r.decidedBy),
      requests.map((r) => r.via),
      outbox.map((d) => d.claim),
      outbox.map((d) => d.deliveryId),
      outbox.map((d) => d.endpoint),
      outbox.map((d) => d.eventType),
      outbox.map((d) => d.payload),
    ],
  )
}

/** The batches of several claims (any status), in one read: what the refused claims of a group are explained from. */
export const getBatches = (claims: readonly Pick<ClaimBatchRequest, 'threadId' | 'batchId'>[]) =>
  statement<BatchRow>(
    `SELECT b.* FROM interrupt_batches b
     JOIN unnest($1::text[], $2::text[]) AS c(thread_id, batch_id) ON b.batch_id = c.batch_id AND b.thread_id = c.thread_id`,
    [claims.map((c) => c.threadId), claims.map((c) => c.batchId)],
  )

/** A batch of this thread (any status): what a refused claim is explained from. */
export const getBatch = (threadId: string, batchId: string) =>
  statement<BatchRow>('SELECT * FROM interrupt_batches WHERE batch_id = $1 AND thread_id = $2', [batchId, threadId])
