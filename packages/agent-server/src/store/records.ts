import type {
  ExpiryPolicy,
  Interrupt,
  Message,
  ResumeEntry,
  RunFinishedOutcome,
  ThreadStatus,
} from '@interlude/protocol'
import type { NewToolCall } from './requests.ts'

/** What a store keeps and answers: the rows of the Store contract as records (docs/architecture.md). */

export type RunKind = 'input' | 'resume'
export type RunStatus = 'running' | 'succeeded' | 'interrupted' | 'failed' | 'cancelled'
export type BatchStatus = 'pending' | 'claimed' | 'resolved' | 'cancelled' | 'expired'

/**
 * Tool-call ledger statuses. `pending`: recorded, may run without a decision. `awaiting_decision`:
 * in an interrupt batch. `awaiting_result`: a browser or external call whose result comes later by
 * toolCallId. `started`: the effect began (a crash leaves it here). `unknown`: the run that started
 * it died and `reconcile` could not settle it — never re-executed, listed in `unsettledEffects`.
 */
export type ToolCallStatus =
  | 'pending'
  | 'awaiting_decision'
  | 'awaiting_result'
  | 'started'
  | 'unknown'
  | 'succeeded'
  | 'failed'
  | 'denied'
  | 'cancelled'
  | 'rejected'

export type ToolCallKind = 'server' | 'human' | 'client' | 'external'

export interface ThreadRecord {
  readonly threadId: string
  readonly ownerId: string
  readonly revision: number
  readonly status: ThreadStatus
  readonly state: unknown
  readonly activeRunId: string | undefined
  readonly lastSeq: number
  readonly createdAt: number
  readonly updatedAt: number
  /** Stored when the thread is created (from its first user message), never derived from the history again. */
  readonly title: string | undefined
  /**
   * Running totals of the thread's messages (count, and bytes of their JSON), kept by every append in the same
   * transaction, so the thread cap (`limits.threadMaxMessages` / `threadMaxBytes`) is checked in O(1).
   */
  readonly messageCount: number
  readonly messageBytes: number
}

/** A stored message with its position in the thread (0-based, append order): the cursor of message pages. */
export interface StoredMessage {
  readonly position: number
  readonly message: Message
  /** Bytes of the message as stored JSON. */
  readonly bytes: number
}

export interface RunRecord {
  readonly threadId: string
  readonly runId: string
  readonly kind: RunKind
  readonly status: RunStatus
  readonly parentRunId: string | undefined
  /** For resume runs: the batch claimed and the decision hash admitted. */
  readonly batchId: string | undefined
  readonly decisionHash: string | undefined
  readonly outcome: RunFinishedOutcome | undefined
  readonly errorCode: string | undefined
  readonly createdAt: number
  readonly finishedAt: number | undefined
  /** The process executing it (a random id per server process). */
  readonly executorId: string | undefined
  /** While running: the executor renews this; after it, the run counts as abandoned. */
  readonly leaseUntil: number | undefined
  readonly cancelRequested: boolean
  /** Tokens its model calls used (absent while none were reported). */
  readonly usage?: UsageCounts
}

/** Token counts (docs/protocol.md#token-usage). */
export interface UsageCounts {
  readonly inputTokens: number
  readonly outputTokens: number
  readonly totalTokens: number
}

/** Whose usage to sum: one thread's runs, or the runs of every thread a principal owns. */
export type UsageScope = { readonly threadId: string } | { readonly ownerId: string }

/** `ask`: raised by `ctx.interrupt` inside a tool's `execute` (docs/approvals.md#asking-from-inside-a-tool); `guardrail`, `budget`: docs/guardrails.md. */
export type InterruptKind = 'approval' | 'input' | 'ask' | 'guardrail' | 'budget'

/** An interrupt as emitted, plus the server-side data needed to act on its answer. */
export interface StoredInterrupt {
  readonly interrupt: Interrupt
  readonly kind: InterruptKind
  readonly toolCallId: string
  readonly toolName: string
}

export interface BatchRecord {
  readonly batchId: string
  readonly threadId: string
  /** The run that raised the batch. */
  readonly runId: string
  readonly status: BatchStatus
  readonly interrupts: readonly StoredInterrupt[]
  readonly createdAt: number
  readonly expiresAt: number
  readonly decisionHash: string | undefined
  readonly decision: readonly ResumeEntry[] | undefined
  readonly claimedByRunId: string | undefined
  /** What happens when `expiresAt` passes (docs/approvals.md#deadlines). */
  readonly onExpiry: ExpiryPolicy
}

/** An open batch in the cross-owner inbox, with what the inbox shows of its thread. */
export interface PendingBatchRecord extends BatchRecord {
  readonly ownerId: string
  readonly title: string | undefined
}

/** A call of the ledger: what `insertToolCalls` recorded (without its `now`), and where it stands. */
export interface ToolCallRecord extends Omit<NewToolCall, 'now'> {
  /** The TOOL_CALL_RESULT content once settled. */
  readonly result: string | undefined
  /** The run that moved it to `started` (may differ from `runId` for a resumed call). */
  readonly attemptRunId: string | undefined
  readonly startedAt: number | undefined
  readonly finishedAt: number | undefined
}

export interface NewEvent {
  readonly type: string
  readonly json: string
}

export interface StoredEvent extends NewEvent {
  readonly seq: number
  readonly runId: string
}

export interface RunKey {
  readonly threadId: string
  readonly runId: string
}

export interface RunHeartbeat extends RunKey {
  readonly cancelRequested: boolean
}

export interface ThreadHead {
  readonly threadId: string
  readonly lastSeq: number
  readonly activeRunId: string | undefined
}

export interface AdmissionView {
  readonly thread: ThreadRecord
  readonly run: RunRecord | undefined
  readonly openBatch: BatchRecord | undefined
  /** Only with `history: true`: the ids among the asked `messageIds` that the thread already has. */
  readonly knownMessageIds: ReadonlySet<string>
  /** Only with `history: true`: the ids among the asked `toolCallIds` of calls the thread has (any status). */
  readonly knownToolCallIds: ReadonlySet<string>
  /** Only with `history: true`: the browser and external calls awaiting their result, in the model's order. */
  readonly awaitingResults: readonly ToolCallRecord[]
  /**
   * Only with `history: true`: calls recorded and never started while no batch is open — the free calls a response
   * held while its browser or external calls waited (docs/decisions.md#a-turn-keeps-its-promises).
   */
  readonly heldCalls: readonly ToolCallRecord[]
}

/**
 * A webhook delivery to write in the same transaction as the change it reports
 * (docs/approvals.md#webhooks): a crash can neither lose nor invent one.
 */
export interface NewOutboxDelivery {
  /** Stable across retries (the `webhook-id` header). */
  readonly deliveryId: string
  readonly endpoint: string
  readonly eventType: string
  /** The body as JSON text, sent byte for byte on every attempt. */
  readonly payload: string
}

export type OutboxStatus = 'pending' | 'delivered' | 'failed'

/** A delivery as the outbox keeps it: where it stands and which sender holds it. */
export interface OutboxDelivery extends NewOutboxDelivery {
  readonly status: OutboxStatus
  /** Settled attempts so far (each `settleOutbox` adds 1). */
  readonly attempts: number
  readonly createdAt: number
  /** Not sent before this time (retry back-off). */
  readonly nextAttemptAt: number
  readonly lastError: string | undefined
  /** The sender holding the row (`claimOutbox`) until `lockedUntil`. */
  readonly lockedBy: string | undefined
  readonly lockedUntil: number | undefined
}
