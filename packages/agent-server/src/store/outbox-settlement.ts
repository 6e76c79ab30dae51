import type { OutboxSettlement, OutboxStatus } from './store.ts'

/**
 * What a settled attempt writes, decided once for both stores (docs/approvals.md#webhooks). Every
 * settlement counts an attempt and releases the lock; `null` keeps the column as it is, so a
 * delivered row keeps the error of the attempt before it.
 */
export interface SettledColumns {
  readonly status: OutboxStatus
  readonly nextAttemptAt: number | null
  readonly lastError: string | null
}

export function settledColumns(settlement: OutboxSettlement): SettledColumns {
  switch (settlement.outcome) {
    case 'delivered':
      return { status: 'delivered', nextAttemptAt: null, lastError: null }
    case 'retry':
      return { status: 'pending', nextAttemptAt: settlement.nextAttemptAt, lastError: settlement.error }
    case 'failed':
      return { status: 'failed', nextAttemptAt: null, lastError: settlement.error }
  }
}
