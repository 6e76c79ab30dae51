import type {
  DecisionVia,
  ExpiryPolicy,
  Grant,
  Message,
  ResumeEntry,
  RunFinishedOutcome,
  ThreadStatus,
} from '@interlude/protocol'
import type {
  BatchStatus,
  NewEvent,
  NewOutboxDelivery,
  OutboxStatus,
  RunKey,
  RunStatus,
  StoredEvent,
  StoredInterrupt,
  ThreadRecord,
  ToolCallKind,
  ToolCallStatus,
} from './records.ts'

/** What the Store contract's methods take and answer besides records (docs/architecture.md). */

export interface ThreadQuery {
  readonly status?: ThreadStatus
  readonly limit: number
  /** Continue after this (updatedAt, threadId) position of the previous page. */
  readonly after?: { readonly updatedAt: number; readonly threadId: string }
  /** Only threads with an open batch that expires after this time or is kept past it (the approval inbox). */
  readonly pendingInterruptsAt?: number
}

/** A page of messages, newest end first chosen, answered in order (docs/protocol.md#threadsnapshot). */
export interface MessagePageQuery {
  /** Only messages at positions below this one (the cursor of the previous page); absent: up to the last message. */
  readonly beforePosition?: number
  /** At most this many messages. */
  readonly limit: number
  /**
   * At most this many bytes of message JSON, counted from the newest message of the page backwards; the newest one
   * is always included, however large. Absent: no byte bound.
   */
  readonly maxBytes?: number
}

/** What admission asks about a history besides the thread (`Store.getAdmissionView`). */
export interface AdmissionViewOptions {
  /** Read the calls awaiting a result and answer which of the ids below the thread knows. */
  readonly history: boolean
  /** Message ids of the input: answered in `knownMessageIds` (one bounded lookup, never the whole history). */
  readonly messageIds?: readonly string[]
  /** Tool call ids answered by the input's tool messages: answered in `knownToolCallIds`. */
  readonly toolCallIds?: readonly string[]
}

export interface EventQuery {
  /** Only events with `seq > afterSeq`. @default 0 */
  readonly afterSeq?: number
  readonly runId?: string
  readonly limit?: number
}

export interface StartInputRunRequest {
  readonly threadId: string
  readonly ownerId: string
  readonly runId: string
  readonly parentRunId: string | undefined
  /** `null`: the thread must not exist (it is created with `initialState`). */
  readonly expectedRevision: number | null
  readonly initialState: unknown
  readonly messages: readonly Message[]
  /** Results for pending browser/external calls carried by this input (`unknown`: an external call overtaken). */
  readonly toolResults: readonly {
    readonly toolCallId: string
    readonly status: 'succeeded' | 'cancelled' | 'unknown'
    readonly result: string
  }[]
  readonly now: number
  /** The admitting process, which executes the run. */
  readonly executorId: string
  readonly leaseUntil: number
  /** Stored only when this run creates the thread (`expectedRevision: null`); ignored otherwise. */
  readonly title?: string
}

export type StartRunResult =
  | { readonly ok: true; readonly thread: ThreadRecord }
  | {
      readonly ok: false
      readonly reason: 'revision_changed' | 'busy' | 'interrupted' | 'run_exists' | 'thread_exists'
    }

export interface ClaimBatchRequest {
  readonly threadId: string
  readonly batchId: string
  readonly runId: string
  readonly decisionHash: string
  readonly decision: readonly ResumeEntry[]
  readonly now: number
  readonly executorId: string
  readonly leaseUntil: number
  /** Who decided (a principal, or `system:expiry`): the decision record written with the claim. */
  readonly decidedBy: string
  readonly via: DecisionVia
  /** Written with the claim, only if it is admitted. */
  readonly outbox?: readonly NewOutboxDelivery[]
  /** A vote under an organisation policy (docs/approvals.md#organisation-policies): see `VoteWrite`. */
  readonly vote?: VoteWrite
  /** Bounded grants the decision makes (docs/approvals.md#bounded-grants): written with the claim, only if admitted. */
  readonly grants?: readonly Grant[]
  /**
   * The decision link this decision spends (docs/approvals.md#deciding-outside-the-app): recorded as used with the
   * claim; a link already used refuses the claim (`link_used`) and nothing is written.
   */
  readonly linkId?: string
}

/**
 * How a vote is written: only while the open batch holds exactly `expectedVotes` vote records (else `votes_changed`,
 * and the vote is judged again), adding one. `settles: false` stores the record alone — no claim, no run, the batch
 * stays open; `settles: true` is the claim as without votes, its record marked. `kind: 'escalation'` is the
 * `system:escalation` record, written the same way. `kind: 'reminder'` marks a reminder as sent, once per `runId`,
 * without counting as a vote; it is never listed as a decision record.
 */
export interface VoteWrite {
  readonly kind: 'vote' | 'escalation' | 'reminder'
  readonly stage: number
  readonly expectedVotes: number
  readonly settles: boolean
  /**
   * A vote that settles nothing: the events of its own short run (`RUN_STARTED`, the vote's record, `RUN_FINISHED`
   * with the batch's interrupts), appended to the paused thread's log under the vote's runId with an `interrupted` run
   * row, in the vote's transaction — so followers see the vote live (docs/approvals.md#organisation-policies).
   */
  readonly events?: readonly NewEvent[]
  /** With `events`: the run's `RUN_FINISHED` outcome as stored on its run row. */
  readonly outcomeJson?: string
}

/** A used decision link (`getUsedDecisionLink`). */
export interface UsedDecisionLink {
  readonly linkId: string
  readonly threadId: string
  /** The run that carries out the decision the link made. */
  readonly runId: string
  readonly decidedBy: string
  readonly usedAt: number
}

export type ClaimBatchResult =
  /** `events`: what a vote that settles nothing appended to the log (`VoteWrite.events`). */
  | { readonly ok: true; readonly thread: ThreadRecord; readonly events?: readonly StoredEvent[] }
  | {
      readonly ok: false
      readonly reason: 'already_claimed'
      readonly claimedByRunId: string
      readonly decisionHash: string
    }
  | { readonly ok: false; readonly reason: 'busy' | 'run_exists' | 'not_pending' | 'link_used' | 'votes_changed' }

export interface NewBatch {
  readonly batchId: string
  readonly threadId: string
  readonly runId: string
  readonly interrupts: readonly StoredInterrupt[]
  readonly createdAt: number
  readonly expiresAt: number
  readonly onExpiry: ExpiryPolicy
  /** Written with the batch, only if the write is not fenced. */
  readonly outbox?: readonly NewOutboxDelivery[]
}

export interface FinishRunRequest {
  readonly threadId: string
  readonly runId: string
  readonly status: Exclude<RunStatus, 'running'>
  readonly outcome: RunFinishedOutcome | undefined
  readonly errorCode: string | undefined
  readonly events: readonly NewEvent[]
  /** For a resume run: how its claimed batch closes. */
  readonly closeBatch:
    | { readonly batchId: string; readonly status: Extract<BatchStatus, 'resolved' | 'cancelled' | 'expired'> }
    | undefined
  readonly now: number
  /** Calls closed with the run (recovery): each settles only if still in one of `from`. */
  readonly closeCalls?: readonly CloseCall[]
  /** New thread state (a reconciled effect's state change). */
  readonly state?: unknown
  /** Written with the run's end, only if something is written (the run was still running). */
  readonly outbox?: readonly NewOutboxDelivery[]
}

export interface CloseCall {
  readonly toolCallId: string
  readonly from: readonly ToolCallStatus[]
  readonly status: Extract<ToolCallStatus, 'succeeded' | 'failed' | 'cancelled' | 'unknown'>
  readonly result: string
  readonly message: Message
}

export interface NewToolCall {
  readonly threadId: string
  readonly toolCallId: string
  readonly runId: string
  /** The assistant message that carries the call. */
  readonly messageId: string
  readonly toolName: string
  /** Raw argument text as the model produced it. */
  readonly argsText: string
  readonly kind: ToolCallKind
  readonly status: ToolCallStatus
  readonly now: number
}

export interface SettleToolCallRequest {
  readonly threadId: string
  readonly runId: string
  readonly toolCallId: string
  readonly status: Extract<
    ToolCallStatus,
    // `unknown`: a continuation settles an effect its dead attempt left `started` (docs/architecture.md).
    // `awaiting_decision`: a tool asked from inside `execute`; its claim is released until the answer
    // (docs/approvals.md#asking-from-inside-a-tool).
    'succeeded' | 'failed' | 'denied' | 'cancelled' | 'rejected' | 'awaiting_result' | 'unknown' | 'awaiting_decision'
  >
  readonly result: string | undefined
  /** The tool message that carries the result into history. */
  readonly message: Message | undefined
  readonly state?: unknown
  readonly now: number
}

export type BeginEffectResult = 'started' | 'already_started' | 'cancel_requested' | 'not_active'

/** Which running runs count as abandoned (`listAbandonedRuns`). */
export interface AbandonedRunsQuery {
  /** Lease clock (epoch ms): a lease that ended before it is over. */
  readonly now: number
  /** Every running run, whatever its lease (single-process startup). */
  readonly all?: boolean
  /** Not the runs of this executor (the caller's own). */
  readonly excludeExecutor?: string
}

export interface TakeOverRequest extends RunKey {
  readonly executorId: string
  readonly leaseUntil: number
  /** Lease clock (epoch ms). */
  readonly now: number
  /** Take it even if its lease has not ended (single-process startup). */
  readonly force: boolean
}

export type StoreChange =
  | { readonly kind: 'events'; readonly threadId: string; readonly seq: number }
  | { readonly kind: 'cancel'; readonly threadId: string; readonly runId: string }

/** The cross-owner inbox (`listPendingBatches`): newest first, keyset pages. */
export interface PendingBatchQuery {
  readonly limit: number
  /** Continue before this (createdAt, batchId) position: the last item of the previous page. */
  readonly before?: { readonly createdAt: number; readonly batchId: string }
  /** Only this owner's batches (a caller who may decide nothing but its own: the inbox costs what it may see). */
  readonly owner?: string
}

/** The expiry sweep (`listDueBatches`). */
export interface DueBatchQuery {
  /** Batches whose `expiresAt <= now` are due. */
  readonly now: number
  readonly limit: number
}

/** A sender's lease on due deliveries (`claimOutbox`). */
export interface ClaimOutboxRequest {
  readonly executorId: string
  readonly now: number
  /** The rows stay locked to this executor until then. */
  readonly lockUntil: number
  readonly limit: number
}

/** How an attempt ended (`settleOutbox`); only the executor holding the lock may settle. */
export type OutboxSettlement =
  | { readonly deliveryId: string; readonly executorId: string; readonly outcome: 'delivered' }
  | {
      readonly deliveryId: string
      readonly executorId: string
      readonly outcome: 'retry'
      readonly nextAttemptAt: number
      readonly error: string
    }
  | { readonly deliveryId: string; readonly executorId: string; readonly outcome: 'failed'; readonly error: string }

/** `listOutbox` (tests and operators): oldest first. */
export interface OutboxFilter {
  readonly status?: OutboxStatus
  readonly limit?: number
}

/**
 * `reconcileEffect` (docs/architecture.md#unknown-effects): what a person found out about an effect whose outcome was
 * unknown.
 */
export interface ReconcileEffectRequest {
  readonly threadId: string
  readonly toolCallId: string
  readonly status: Extract<ToolCallStatus, 'succeeded' | 'failed'>
  /** The ledger's result text (the outcome, who reconciled it and when). */
  readonly result: string
  readonly now: number
}

/** A tab's claim of a browser call before it runs the handler (docs/client-contract.md#browser-tools). */
export interface ClaimToolCallRequest {
  readonly threadId: string
  readonly toolCallId: string
  /** The claimant's id (one per tab): the same id claiming again is the same claim. */
  readonly claimId: string
  readonly now: number
}

/**
 * `claimed`: this claim holds the call (now, or already). `taken`: another claim holds it. `not_claimable`: not a
 * browser call waiting for its result (settled already, or not the thread's).
 */
export type ClaimToolCallResult =
  { readonly ok: true } | { readonly ok: false; readonly reason: 'taken' | 'not_claimable' }
