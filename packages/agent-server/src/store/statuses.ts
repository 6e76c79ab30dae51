import type { ExpiryPolicy } from '@interlude/protocol'
import type { BatchStatus, OutboxStatus, RunStatus, ToolCallStatus } from './store.ts'

/**
 * The status sets every part of the server agrees on, named once. Stores use them in their SQL,
 * the turn loop and recovery use them to pick calls; a new status is added here or nowhere.
 */

/** A call whose effect has not begun: it may still start (the ledger's `started` needs one of these). */
export const NOT_STARTED_CALL_STATUSES: readonly ToolCallStatus[] = ['pending', 'awaiting_decision']

/** A call the turn still has to settle: not started yet, or waiting for a browser/external result. */
export const OPEN_CALL_STATUSES: readonly ToolCallStatus[] = [...NOT_STARTED_CALL_STATUSES, 'awaiting_result']

/** A call a dead run may have left behind: not started, or started with an unknown outcome. */
export const UNFINISHED_CALL_STATUSES: readonly ToolCallStatus[] = [...NOT_STARTED_CALL_STATUSES, 'started']

/**
 * A call that is done: it never runs again (a fork copies these as they are, docs/time-travel.md). `unknown` is done
 * too: it is never re-executed blindly.
 */
export const TERMINAL_CALL_STATUSES: readonly ToolCallStatus[] = [
  'succeeded',
  'failed',
  'denied',
  'cancelled',
  'rejected',
  'unknown',
]

/** The one batch status that can still be answered. */
export const OPEN_BATCH_STATUS: BatchStatus = 'pending'

/** A run that has ended (everything but `running`). */
export const ENDED_RUN_STATUSES: readonly RunStatus[] = ['succeeded', 'interrupted', 'failed', 'cancelled']

/** The expiry policy that decides nothing: such a batch is never due (docs/approvals.md#deadlines). */
export const UNDECIDED_EXPIRY_POLICY: ExpiryPolicy = 'keep'

/** The one delivery status a sender may still claim; `delivered` and `failed` are final. */
export const OPEN_DELIVERY_STATUS: OutboxStatus = 'pending'
