import type { OutboxRow } from '../rows.ts'
import { OPEN_DELIVERY_STATUS } from '../statuses.ts'
import type { OutboxStatus } from '../store.ts'
import { sqlString } from '../sql-literals.ts'
import type { Prepare } from './prepared.ts'

const OPEN_DELIVERY = sqlString(OPEN_DELIVERY_STATUS)

/** The webhook outbox's statements (docs/approvals.md#webhooks), part of `prepareStatements`. */
export function outboxStatements(prepare: Prepare) {
  return {
    /** Due at once: `next_attempt_at` is the time of the change it reports. */
    insertDelivery: prepare<{ deliveryId: string; endpoint: string; eventType: string; payload: string; now: number }>(
      `INSERT INTO webhook_outbox (delivery_id, endpoint, event_type, payload, status, attempts, created_at, next_attempt_at)
       VALUES (@deliveryId, @endpoint, @eventType, @payload, ${OPEN_DELIVERY}, 0, @now, @now)`,
    ),
    /** Locks due rows whose lock is free or over, oldest first (RETURNING has no order: `ordinal` sorts them). */
    claimOutbox: prepare<
      { executorId: string; now: number; lockUntil: number; limit: number },
      OutboxRow & { ordinal: number }
    >(
      `UPDATE webhook_outbox SET locked_by = @executorId, locked_until = @lockUntil
       WHERE delivery_id IN (
         SELECT delivery_id FROM webhook_outbox
         WHERE status = ${OPEN_DELIVERY} AND next_attempt_at <= @now AND (locked_until IS NULL OR locked_until < @now)
         ORDER BY created_at, rowid
         LIMIT @limit)
       RETURNING *, rowid AS ordinal`,
    ),
    /** Only by the lock holder; `null` keeps a column (see `settledColumns`). */
    settleOutbox: prepare<{
      deliveryId: string
      executorId: string
      status: OutboxStatus
      nextAttemptAt: number | null
      lastError: string | null
    }>(
      `UPDATE webhook_outbox SET status = @status, attempts = attempts + 1,
         next_attempt_at = COALESCE(@nextAttemptAt, next_attempt_at), last_error = COALESCE(@lastError, last_error),
         locked_by = NULL, locked_until = NULL
       WHERE delivery_id = @deliveryId AND locked_by = @executorId AND status = ${OPEN_DELIVERY}`,
    ),
    listOutbox: prepare<{ status: OutboxStatus | null; limit: number }, OutboxRow>(
      'SELECT * FROM webhook_outbox WHERE (@status IS NULL OR status = @status) ORDER BY created_at, rowid LIMIT @limit',
    ),
  }
}
