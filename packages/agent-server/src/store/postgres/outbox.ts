import type { ClaimOutboxRequest, NewOutboxDelivery, OutboxDelivery, OutboxFilter, OutboxSettlement } from '../store.ts'
import { toOutboxDelivery } from '../rows.ts'
import { settledColumns } from '../outbox-settlement.ts'
import * as sql from './approval-statements.ts'
import type { Queryable } from './query.ts'
import { rows } from './query.ts'

/**
 * The webhook outbox of the PostgreSQL store (docs/approvals.md#webhooks): rows written in the
 * transaction of the change they report, then locked by one sender at a time (`FOR UPDATE SKIP
 * LOCKED`, so replicas never share a row) and settled by it. Each is one statement.
 */

/** Inside the caller's transaction; no deliveries, no round trip. */
export async function insertOutboxTx(
  q: Queryable,
  outbox: readonly NewOutboxDelivery[] | undefined,
  now: number,
): Promise<void> {
  if (outbox === undefined || outbox.length === 0) return
  await q.query(sql.insertOutbox(outbox, now))
}

export async function claimOutbox(q: Queryable, request: ClaimOutboxRequest): Promise<OutboxDelivery[]> {
  return (await rows(q, sql.claimOutbox(request))).map(toOutboxDelivery)
}

/** Only the lock holder settles: `false` (and nothing changed) for anyone else. */
export async function settleOutbox(q: Queryable, settlement: OutboxSettlement): Promise<boolean> {
  const { deliveryId, executorId } = settlement
  return (await q.query(sql.settleOutbox(deliveryId, executorId, settledColumns(settlement)))).rowCount === 1
}

export async function listOutbox(q: Queryable, filter: OutboxFilter): Promise<OutboxDelivery[]> {
  return (await rows(q, sql.listOutbox(filter))).map(toOutboxDelivery)
}
