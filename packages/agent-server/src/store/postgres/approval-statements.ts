import type { DecisionRow, OutboxRow, PendingBatchRow } from '../rows.ts'
import type { ClaimOutboxRequest, DueBatchQuery, NewOutboxDelivery, OutboxFilter, PendingBatchQuery } from '../store.ts'
import type { SettledColumns } from '../outbox-settlement.ts'
import { OPEN_BATCH_STATUS, OPEN_DELIVERY_STATUS, UNDECIDED_EXPIRY_POLICY } from '../statuses.ts'
import { sqlString } from '../sql-literals.ts'
import { statement } from './query.ts'
import { BATCH_WITH_INTERRUPTS, INTERRUPTS_OF_B } from './statements.ts'
import type { BatchWithInterrupts } from './statements.ts'

/**
 * The SQL of approvals from anywhere (docs/approvals.md): decision records, the cross-owner inbox,
 * the expiry sweep and the webhook outbox. The claim's own CTEs use the fragments below
 * (`admission-statements.ts`).
 */

const OPEN_BATCH = sqlString(OPEN_BATCH_STATUS)
const UNDECIDED = sqlString(UNDECIDED_EXPIRY_POLICY)
const OPEN_DELIVERY = sqlString(OPEN_DELIVERY_STATUS)

// ---- fragments ---------------------------------------------------------------------------------

/** The interrupt ids of batch `batchRef`, in batch order, as JSON text (a decision record's `interrupt_ids`). */
export const interruptIdsOf = (batchRef: string) =>
  `(SELECT COALESCE(json_agg(i.interrupt_id ORDER BY i.position), '[]'::json)::text FROM interrupts i WHERE i.batch_id = ${batchRef})`

/**
 * Outbox rows from the four parallel arrays of `outboxColumns`, bound from parameter `$first` on,
 * created and due at `now` (an SQL expression), in array order; `where` gates them.
 */
export const insertOutboxRows = (first: number, now: string, where = '') =>
  `INSERT INTO webhook_outbox (delivery_id, endpoint, event_type, payload, status, attempts, created_at, next_attempt_at)
       SELECT o.id, o.endpoint, o.type, o.payload, ${OPEN_DELIVERY}, 0, ${now}, ${now}
       FROM unnest($${first}::text[], $${first + 1}::text[], $${first + 2}::text[], $${first + 3}::text[])
         WITH ORDINALITY AS o(id, endpoint, type, payload, ord)
       ${where} ORDER BY o.ord`

/** The parameters of `insertOutboxRows`. */
export const outboxColumns = (outbox: readonly NewOutboxDelivery[] = []) => [
  outbox.map((d) => d.deliveryId),
  outbox.map((d) => d.endpoint),
  outbox.map((d) => d.eventType),
  outbox.map((d) => d.payload),
]

// ---- decision records ------------------------------------------------------------------------

// In the order they were written (a vote is written under its thread's row lock), not by the replicas' clocks: the
// votes on a batch are counted in that order (docs/approvals.md#organisation-policies).

export const listDecisions = (threadId: string) =>
  statement<DecisionRow>(
    "SELECT *, (SELECT b.run_id FROM interrupt_batches b WHERE b.batch_id = decisions.batch_id) AS batch_run_id FROM decisions WHERE thread_id = $1 AND vote_kind IS DISTINCT FROM 'reminder' ORDER BY ordinal",
    [threadId],
  )

export const getDecision = (threadId: string, runId: string) =>
  statement<DecisionRow>(
    "SELECT *, (SELECT b.run_id FROM interrupt_batches b WHERE b.batch_id = decisions.batch_id) AS batch_run_id FROM decisions WHERE thread_id = $1 AND run_id = $2 AND vote_kind IS DISTINCT FROM 'reminder'",
    [threadId, runId],
  )

// ---- batches across threads ------------------------------------------------------------------

/** The cross-owner inbox: open batches of every owner, newest first (keyset), with owner and title. */
export const listPendingBatches = (query: PendingBatchQuery) =>
  statement<PendingBatchRow & BatchWithInterrupts>(
    `SELECT b.*, t.owner_id, t.title, ${INTERRUPTS_OF_B}
     FROM interrupt_batches b JOIN threads t ON t.thread_id = b.thread_id
     WHERE b.status = ${OPEN_BATCH} AND ($1::bigint IS NULL OR (b.created_at, b.batch_id) < ($1::bigint, $2::text))
       AND ($4::text IS NULL OR t.owner_id = $4)
     ORDER BY b.created_at DESC, b.batch_id DESC
     LIMIT $3`,
    [query.before?.createdAt ?? null, query.before?.batchId ?? null, query.limit, query.owner ?? null],
  )

/** The expiry sweep: open batches past their deadline whose policy decides something (the deadline index). */
export const listDueBatches = (query: DueBatchQuery) =>
  statement<BatchWithInterrupts>(
    `${BATCH_WITH_INTERRUPTS}
     WHERE b.status = ${OPEN_BATCH} AND b.expires_at <= $1 AND b.on_expiry <> ${UNDECIDED}
     ORDER BY b.expires_at, b.batch_id
     LIMIT $2`,
    [query.now, query.limit],
  )

// ---- webhook outbox ----------------------------------------------------------------------------

/** Deliveries written with a change (`createBatch`, `finishRun`), inside its transaction. */
export const insertOutbox = (outbox: readonly NewOutboxDelivery[], now: number) =>
  statement(insertOutboxRows(1, '$5'), [...outboxColumns(outbox), now])

/**
 * Locks due rows whose lock is free or over, oldest first. `SKIP LOCKED` passes over rows another
 * sender's statement is locking right now, and a row it committed a lock on fails the re-check, so
 * two replicas never get the same row.
 */
export const claimOutbox = (request: ClaimOutboxRequest) =>
  statement<OutboxRow>(
    `WITH due AS (
       SELECT delivery_id FROM webhook_outbox
       WHERE status = ${OPEN_DELIVERY} AND next_attempt_at <= $1 AND (locked_until IS NULL OR locked_until < $1)
       ORDER BY created_at, ordinal
       LIMIT $2
       FOR UPDATE SKIP LOCKED
     ), locked AS (
       UPDATE webhook_outbox o SET locked_by = $3, locked_until = $4
       FROM due WHERE o.delivery_id = due.delivery_id
       RETURNING o.*
     )
     SELECT * FROM locked ORDER BY created_at, ordinal`,
    [request.now, request.limit, request.executorId, request.lockUntil],
  )

/** Only by the lock holder; `null` keeps a column (see `settledColumns`). */
export const settleOutbox = (deliveryId: string, executorId: string, settled: SettledColumns) =>
  statement(
    `UPDATE webhook_outbox SET status = $3, attempts = attempts + 1,
       next_attempt_at = COALESCE($4, next_attempt_at), last_error = COALESCE($5, last_error),
       locked_by = NULL, locked_until = NULL
     WHERE delivery_id = $1 AND locked_by = $2 AND status = ${OPEN_DELIVERY}`,
    [deliveryId, executorId, settled.status, settled.nextAttemptAt, settled.lastError],
  )

export const listOutbox = (filter: OutboxFilter) =>
  statement<OutboxRow>(
    'SELECT * FROM webhook_outbox WHERE ($1::text IS NULL OR status = $1) ORDER BY created_at, ordinal LIMIT $2',
    [filter.status ?? null, filter.limit ?? null],
  )
