import type { Interrupt, Message, ResumeEntry, RunFinishedOutcome, ThreadStatus } from '@interlude/protocol'

/**
 * The persistence contract of the agent server (docs/architecture.md), implemented by SQLite and PostgreSQL
 * and pinned by the shared conformance suite (`src/test-utils/store-conformance.ts`). Every method
 * returns a Promise. Races are decided here, by conditional writes, never by process memory:
 * `startInputRun` and `claimBatch` are the two admission writes and each is one atomic transaction.
 *
 * **Fencing**: every write a run makes (`appendEvents`, `appendMessages`, `insertToolCalls`,
 * `beginEffect`, `settleToolCall`, `createBatch`) is conditional on the run still being the
 * thread's active run; otherwise it throws `RunNotActiveError` and writes nothing. A process that
 * lost its run (its lease expired and another process closed it) can therefore never add to it.
 */
export interface Store {
  readonly kind: string
  /** Cheap round trip used by `GET {base}/health`. */
  ping(): Promise<void>
  close(): Promise<void>

  /** A server-wide setting (e.g. the anonymous-session secret); `create()` runs only when absent. */
  getOrCreateSetting(key: string, create: () => string): Promise<string>

  getThread(threadId: string): Promise<ThreadRecord | undefined>
  /**
   * Everything admission reads, from one consistent snapshot (one round trip): the thread, the
   * run with this id, the open batch and — with `history` — the messages and the calls awaiting
   * a browser/external result. `undefined` when the thread does not exist.
   */
  getAdmissionView(
    threadId: string,
    runId: string,
    options: { readonly history: boolean },
  ): Promise<AdmissionView | undefined>
  listMessages(threadId: string): Promise<Message[]>
  /**
   * The owner's threads, most recently updated first (keyset pagination). With
   * `pendingInterruptsAt`, only threads whose open batch has not expired at that time.
   */
  listThreads(ownerId: string, query: ThreadQuery): Promise<ThreadRecord[]>
  getRun(threadId: string, runId: string): Promise<RunRecord | undefined>
  /** The thread's open batch (status `pending`, expired or not). At most one exists per thread. */
  getOpenBatch(threadId: string): Promise<BatchRecord | undefined>
  /** The batch (any status) that contains this interrupt id on this thread. */
  getBatchOfInterrupt(threadId: string, interruptId: string): Promise<BatchRecord | undefined>
  listToolCalls(threadId: string, filter?: { readonly status?: readonly ToolCallStatus[] }): Promise<ToolCallRecord[]>
  getToolCall(threadId: string, toolCallId: string): Promise<ToolCallRecord | undefined>

  /**
   * Admits a run carrying new input. Atomically: checks the thread is at `expectedRevision`
   * (`null` = the thread must not exist yet and is created), idle, and has no open batch; inserts
   * the run; appends `messages`; settles `toolResults`; marks the thread running.
   */
  startInputRun(request: StartInputRunRequest): Promise<StartRunResult>
  /**
   * Admits a resume. Atomically: `UPDATE interrupt_batches SET status='claimed' … WHERE status =
   * 'pending'`, requires the thread to be idle, inserts the run and marks the thread running.
   */
  claimBatch(request: ClaimBatchRequest): Promise<ClaimBatchResult>

  /**
   * Appends events to the thread's log with strictly increasing `seq` (one transaction, one
   * statement on PostgreSQL, which also NOTIFYs listeners). Fenced (see above).
   */
  appendEvents(threadId: string, runId: string, events: readonly NewEvent[]): Promise<StoredEvent[]>
  readEvents(threadId: string, query: EventQuery): Promise<StoredEvent[]>
  /** `last_seq` and active run of each existing thread (one round trip; the live-tail poll). */
  pollThreads(threadIds: readonly string[]): Promise<ThreadHead[]>

  /** Appends messages (append-only; a known id is an error). Fenced. */
  appendMessages(threadId: string, runId: string, messages: readonly Message[]): Promise<void>
  /** Replaces the state (tooling; runs change state only through `settleToolCall`). */
  setState(threadId: string, state: unknown): Promise<void>

  /** Records the tool calls of one model response. Fenced. */
  insertToolCalls(records: readonly NewToolCall[]): Promise<void>
  /**
   * Effects ledger: moves a call to `started` only from a not-yet-started status, only while the
   * run is the thread's active run and no cancel was requested for it (one conditional update).
   * `already_started`: another attempt started (or settled) it: it must not run again.
   * `cancel_requested`: the run was asked to stop: the tool must not start.
   * `not_active`: the run is no longer active (fenced).
   */
  beginEffect(threadId: string, toolCallId: string, runId: string, now: number): Promise<BeginEffectResult>
  /**
   * Settles a call (result + status) and, when given, stores the new state and the tool message in
   * the same transaction, so a state change and its ledger entry commit together. Fenced.
   */
  settleToolCall(request: SettleToolCallRequest): Promise<void>

  /** Stores an interrupt batch (and its interrupts) and marks the thread interrupted. Fenced. */
  createBatch(batch: NewBatch): Promise<void>

  /**
   * Ends a run: records status + outcome (only if it is still `running`: otherwise nothing is
   * written and the answer is `undefined`), settles `closeCalls` (each conditionally, with its
   * tool message), stores `state`, appends the last events, closes the batch the run claimed,
   * releases the thread (idle or interrupted) and bumps the revision — one transaction, so the
   * terminal event is in the log before another run can start on the thread.
   */
  finishRun(request: FinishRunRequest): Promise<StoredEvent[] | undefined>

  /** Sets the run's cancel flag if it is running (executors check it at checkpoints). Returns the run. */
  requestCancel(threadId: string, runId: string, now: number): Promise<RunRecord | undefined>
  /**
   * The executor's lease renewal: extends `leaseUntil` of every run this executor is running and
   * returns them with their cancel flag (a run missing from the answer was taken over).
   */
  heartbeatRuns(executorId: string, leaseUntil: number): Promise<RunHeartbeat[]>
  /** Runs still `running` whose lease ended before `now` (or every running run with `all`). */
  listAbandonedRuns(query: {
    readonly now: number
    readonly all?: boolean
    readonly excludeExecutor?: string
  }): Promise<RunKey[]>
  /**
   * Takes over an abandoned run before closing it (conditional update): only while it is running
   * and its lease has ended (or with `force`). The winner gets the run, everybody else `undefined`.
   */
  takeOverRun(request: TakeOverRequest): Promise<RunRecord | undefined>

  /**
   * Optional change feed from other processes (PostgreSQL LISTEN/NOTIFY): appended events and
   * cancel requests. Readers treat it as a wake-up only; they always read the log.
   */
  watch?(listener: (change: StoreChange) => void): () => void
}

/** Thrown by fenced writes of a run that is no longer the thread's active run. */
export class RunNotActiveError extends Error {
  constructor(
    readonly threadId: string,
    readonly runId: string,
  ) {
    super(`Run ${runId} is no longer active on thread ${threadId}.`)
    this.name = 'RunNotActiveError'
  }
}

export type BeginEffectResult = 'started' | 'already_started' | 'cancel_requested' | 'not_active'

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

export interface ThreadQuery {
  readonly status?: ThreadStatus
  readonly limit: number
  /** Continue after this (updatedAt, threadId) position of the previous page. */
  readonly after?: { readonly updatedAt: number; readonly threadId: string }
  /** Only threads with an open batch that expires after this time (the approval inbox). */
  readonly pendingInterruptsAt?: number
}

export interface AdmissionView {
  readonly thread: ThreadRecord
  readonly run: RunRecord | undefined
  readonly openBatch: BatchRecord | undefined
  /** Only with `history: true`. */
  readonly messages: readonly Message[]
  /** Only with `history: true`. */
  readonly awaitingResults: readonly ToolCallRecord[]
}

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
}

export type InterruptKind = 'approval' | 'input'

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
}

export interface ToolCallRecord {
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
  /** The TOOL_CALL_RESULT content once settled. */
  readonly result: string | undefined
  /** The run that moved it to `started` (may differ from `runId` for a resumed call). */
  readonly attemptRunId: string | undefined
  readonly startedAt: number | undefined
  readonly finishedAt: number | undefined
}

export interface NewToolCall {
  readonly threadId: string
  readonly toolCallId: string
  readonly runId: string
  readonly messageId: string
  readonly toolName: string
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
    'succeeded' | 'failed' | 'denied' | 'cancelled' | 'rejected' | 'awaiting_result'
  >
  readonly result: string | undefined
  /** The tool message that carries the result into history. */
  readonly message: Message | undefined
  readonly state?: unknown
  readonly now: number
}

export interface NewEvent {
  readonly type: string
  readonly json: string
}

export interface StoredEvent extends NewEvent {
  readonly seq: number
  readonly runId: string
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
  /** Results for pending browser/external calls carried by this input. */
  readonly toolResults: readonly {
    readonly toolCallId: string
    readonly status: 'succeeded' | 'cancelled'
    readonly result: string
  }[]
  readonly now: number
  /** The admitting process, which executes the run. */
  readonly executorId: string
  readonly leaseUntil: number
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
}

export type ClaimBatchResult =
  | { readonly ok: true; readonly thread: ThreadRecord }
  | {
      readonly ok: false
      readonly reason: 'already_claimed'
      readonly claimedByRunId: string
      readonly decisionHash: string
    }
  | { readonly ok: false; readonly reason: 'busy' | 'run_exists' | 'not_pending' }

export interface NewBatch {
  readonly batchId: string
  readonly threadId: string
  readonly runId: string
  readonly interrupts: readonly StoredInterrupt[]
  readonly createdAt: number
  readonly expiresAt: number
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
}

export interface CloseCall {
  readonly toolCallId: string
  readonly from: readonly ToolCallStatus[]
  readonly status: Extract<ToolCallStatus, 'succeeded' | 'failed' | 'cancelled' | 'unknown'>
  readonly result: string
  readonly message: Message
}
