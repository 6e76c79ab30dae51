import type { ClaimOutboxRequest, NewOutboxDelivery, OutboxDelivery, OutboxFilter, OutboxSettlement } from '../store.ts'
import { toOutboxDelivery } from '../rows.ts'
import { settledColumns } from '../outbox-settlement.ts'
import type { SqliteStatements } from './statements.ts'

/**
 * The webhook outbox of the SQLite store (docs/approvals.md#webhooks): rows written in the transaction
 * of the change they report, then locked by one sender at a time and settled by it. The writers run
 * inside the store's `BEGIN IMMEDIATE` transaction, which serialises them across processes.
 */

/** Inside the caller's transaction: each delivery is due at once. */
export function insertOutboxTx(
  s: SqliteStatements,
  outbox: readonly NewOutboxDelivery[] | undefined,
  now: number,
): void {
  for (const delivery of outbox ?? []) s.insertDelivery.run({ ...delivery, now })
}

/** One conditional update; its rows come back unordered, so they are sorted oldest first here. */
export function claimOutboxTx(s: SqliteStatements, request: ClaimOutboxRequest): OutboxDelivery[] {
  const { executorId, now, lockUntil, limit } = request
  const locked = s.claimOutbox.all({ executorId, now, lockUntil, limit })
  return locked.sort((a, b) => a.created_at - b.created_at || a.ordinal - b.ordinal).map(toOutboxDelivery)
}

/** Only the lock holder settles: `false` (and nothing changed) for anyone else. */
export function settleOutboxTx(s: SqliteStatements, settlement: OutboxSettlement): boolean {
  const { deliveryId, executorId } = settlement
  return s.settleOutbox.run({ deliveryId, executorId, ...settledColumns(settlement) }).changes === 1
}

export function listOutbox(s: SqliteStatements, filter: OutboxFilter): OutboxDelivery[] {
  return s.listOutbox.all({ status: filter.status ?? null, limit: filter.limit ?? -1 }).map(toOutboxDelivery)
}
