import type { DecisionRecord, Message, PermissionRule } from '@interlude/protocol'
import type { PermissionRuleFilter, PermissionRuleMatch } from './permission-rules.ts'
import type { GrantStore } from './grants.ts'
import type { SaveToolCheckpoint } from './tool-checkpoints.ts'
import type { RunQueueStore } from './run-queue.ts'
import type { ForkStore } from './forks.ts'
import type { DecisionLinkStore } from './decision-links.ts'
import type {
  AdmissionView,
  BatchRecord,
  NewEvent,
  OutboxDelivery,
  PendingBatchRecord,
  RunHeartbeat,
  RunKey,
  StoredMessage,
  RunRecord,
  StoredEvent,
  ThreadHead,
  ThreadRecord,
  ToolCallRecord,
  ToolCallStatus,
  UsageCounts,
  UsageScope,
} from './records.ts'
import type {
  AbandonedRunsQuery,
  AdmissionViewOptions,
  BeginEffectResult,
  ClaimBatchRequest,
  ClaimBatchResult,
  ClaimOutboxRequest,
  DueBatchQuery,
  EventQuery,
  FinishRunRequest,
  MessagePageQuery,
  NewBatch,
  NewToolCall,
  OutboxFilter,
  OutboxSettlement,
  PendingBatchQuery,
  ReconcileEffectRequest,
  ClaimToolCallRequest,
  ClaimToolCallResult,
  SettleToolCallRequest,
  StartInputRunRequest,
  StartRunResult,
  StoreChange,
  TakeOverRequest,
  ThreadQuery,
} from './requests.ts'

// The contract's records and requests live beside it; importers keep naming them from here.
export { RunNotActiveError } from './run-not-active-error.ts'
export type {
  EnqueueRequest,
  EnqueueResult,
  QueuedInput,
  RunQueueStore,
  TakenSteers,
  TakeSteersRequest,
} from './run-queue.ts'
export type * from './records.ts'
export type * from './requests.ts'
export type * from './tool-checkpoints.ts'
export type * from './forks.ts'
export type { DecisionLinkStore } from './decision-links.ts'
export type { GrantStore } from './grants.ts'

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
 *
 * **Revision**: `ThreadRecord.revision` is the snapshot's "+1 on every committed change"
 * (docs/protocol.md): a write that commits a change to what a thread snapshot shows besides the
 * event log — status, active run, messages, state, open batch — adds exactly 1, however many rows
 * it touches; a new thread starts at 1. Writes that touch only the event log (`lastSeq` counts
 * those), the ledger of unsettled calls or run bookkeeping (leases, cancel flags) add 0, and so
 * does every refused or fenced write. Each method below says which; the conformance suite pins it.
 */
export interface Store extends Partial<RunQueueStore> {
  readonly kind: string
  /** Cheap round trip used by `GET {base}/health`. */
  ping(): Promise<void>
  /**
   * A small write that changes nothing a client sees (a settings row), for readiness (`GET {base}/health?ready`):
   * it fails while the store cannot persist (a full disk, a read-only or lost database). Optional for host stores.
   */
  probeWrite?(): Promise<void>
  close(): Promise<void>

  /** A server-wide setting (e.g. the anonymous-session secret); `create()` runs only when absent. */
  getOrCreateSetting(key: string, create: () => string): Promise<string>

  getThread(threadId: string): Promise<ThreadRecord | undefined>
  /**
   * Optional: how many of the owner's threads have a run executing (`status = 'running'`) plus the owner's queued
   * inputs (docs/protocol.md#multitask), one indexed count each (the concurrent-runs quota at admission). Without it the quota counts only this process's admissions in flight.
   */
  countRunningRuns?(ownerId: string): Promise<number>
  /**
   * Everything admission reads, from one consistent snapshot (one round trip): the thread, the
   * run with this id, the open batch and — with `history` — which of the input's message and tool call ids the
   * thread knows and the calls awaiting a browser/external result. Never the whole history: its size is bounded by
   * the input, not by the thread. `undefined` when the thread does not exist.
   */
  getAdmissionView(threadId: string, runId: string, options: AdmissionViewOptions): Promise<AdmissionView | undefined>
  /**
   * The whole history, in order. Tooling and tests only: no request path reads it (docs/protocol.md#limits); they
   * read `listMessagePage` and `getFirstUserMessage`, bounded queries.
   */
  listMessages(threadId: string): Promise<Message[]>
  /**
   * The newest messages before `beforePosition` (up to `limit` and `maxBytes`), answered oldest first. One bounded
   * query: only the rows of the page are read into memory.
   */
  listMessagePage(threadId: string, query: MessagePageQuery): Promise<StoredMessage[]>
  /** The thread's first user message (the model window keeps it), by the position index. */
  getFirstUserMessage(threadId: string): Promise<StoredMessage | undefined>
  /** Ids of every tool call the thread has recorded (ids only: a new call must not reuse one). */
  listToolCallIds(threadId: string): Promise<string[]>
  /**
   * The owner's threads, most recently updated first (keyset pagination). With
   * `pendingInterruptsAt`, only threads whose open batch has not expired at that time or is kept past its
   * deadline (`onExpiry: 'keep'`, docs/approvals.md#deadlines).
   */
  listThreads(ownerId: string, query: ThreadQuery): Promise<ThreadRecord[]>
  getRun(threadId: string, runId: string): Promise<RunRecord | undefined>
  /**
   * Adds one model call's tokens to a run (any status; not fenced: tokens were spent either way).
   * Optional for custom stores: without it no usage is recorded (docs/protocol.md#token-usage).
   */
  addRunUsage?(threadId: string, runId: string, usage: { inputTokens: number; outputTokens: number }): Promise<void>
  /** Tokens used so far by a thread's runs, or by the runs of every thread a principal owns. Required by token caps. */
  sumUsage?(scope: UsageScope): Promise<UsageCounts>
  /** The thread's open batch (status `pending`, expired or not). At most one exists per thread. */
  getOpenBatch(threadId: string): Promise<BatchRecord | undefined>
  /** The batch (any status) that contains this interrupt id on this thread. */
  getBatchOfInterrupt(threadId: string, interruptId: string): Promise<BatchRecord | undefined>
  listToolCalls(threadId: string, filter?: { readonly status?: readonly ToolCallStatus[] }): Promise<ToolCallRecord[]>
  getToolCall(threadId: string, toolCallId: string): Promise<ToolCallRecord | undefined>

  /**
   * Admits a run carrying new input. Atomically: checks the thread is at `expectedRevision`
   * (`null` = the thread must not exist yet and is created), idle, and has no open batch; inserts
   * the run; appends `messages`; settles `toolResults`; marks the thread running. Revision: +1
   * (a created thread starts at 1); refused: 0.
   */
  startInputRun(request: StartInputRunRequest): Promise<StartRunResult>
  /**
   * Admits a resume. Atomically: `UPDATE interrupt_batches SET status='claimed' … WHERE status =
   * 'pending'`, requires the thread to be idle, inserts the run, marks the thread running, writes
   * the decision record (`decidedBy`, `via`, the batch's interrupt ids in batch order, `decision`
   * as entries, `now`) and `outbox`. A refused claim writes none of it; a record is never updated
   * or deleted (docs/approvals.md#decision-records). Revision: +1; refused: 0.
   */
  claimBatch(request: ClaimBatchRequest): Promise<ClaimBatchResult>
  /**
   * Optional: several claims in one transaction (the expiry sweep), where one commit is much cheaper than many
   * (SQLite). Each is decided and written exactly as by `claimBatch`, in order, and answered in order; a refused one
   * writes nothing and does not affect the others. Without it the sweep claims one by one.
   */
  claimBatches?(requests: readonly ClaimBatchRequest[]): Promise<ClaimBatchResult[]>

  /**
   * Appends events to the thread's log with strictly increasing `seq` (one transaction, one
   * statement on PostgreSQL, which also NOTIFYs listeners). Fenced (see above). Revision: 0.
   */
  appendEvents(threadId: string, runId: string, events: readonly NewEvent[]): Promise<StoredEvent[]>
  /** Events after `afterSeq` in order; with `limit`, one page (replay reads the log page by page). */
  readEvents(threadId: string, query: EventQuery): Promise<StoredEvent[]>
  /** `last_seq` and active run of each existing thread (one round trip; the live-tail poll). */
  pollThreads(threadIds: readonly string[]): Promise<ThreadHead[]>

  /** Appends messages (append-only; a known id is an error). Fenced. Revision: +1. */
  appendMessages(threadId: string, runId: string, messages: readonly Message[]): Promise<void>
  /** Replaces the state (tooling; runs change state only through `settleToolCall`). Revision: +1. */
  setState(threadId: string, state: unknown): Promise<void>

  /** Records the tool calls of one model response. Fenced. Revision: 0. */
  insertToolCalls(records: readonly NewToolCall[]): Promise<void>
  /**
   * Effects ledger: moves a call to `started` only from a not-yet-started status, only while the
   * run is the thread's active run and no cancel was requested for it (one conditional update).
   * `already_started`: another attempt started (or settled) it: it must not run again.
   * `cancel_requested`: the run was asked to stop: the tool must not start.
   * `not_active`: the run is no longer active (fenced). Revision: 0.
   */
  beginEffect(threadId: string, toolCallId: string, runId: string, now: number): Promise<BeginEffectResult>
  /**
   * Settles a call (result + status) and, when given, stores the new state and the tool message in
   * the same transaction, so a state change and its ledger entry commit together. Fenced.
   * Revision: +1 (with or without state or message).
   */
  settleToolCall(request: SettleToolCallRequest): Promise<void>
  /**
   * Settles an effect whose outcome is `unknown` by hand (docs/protocol.md, reconcile route): one conditional
   * update, only from `unknown`. `false`: the call is not unknown (settled already, or never unknown). Not fenced
   * (no run is active for it); like every ledger-only write, revision: 0.
   */
  reconcileEffect(request: ReconcileEffectRequest): Promise<boolean>
  /**
   * Claims a browser call waiting for its result for one tab before it runs the handler (one conditional update:
   * only a `client` call in `awaiting_result` that no other claim holds). The claim is the ledger's attempt
   * (`attemptRunId` = the claim id, `startedAt`): the tab's run of the handler is the call's one attempt. The same
   * claim id again is answered `ok`. Not fenced (no run is active for it); revision: 0.
   */
  claimToolCall(request: ClaimToolCallRequest): Promise<ClaimToolCallResult>

  /**
   * Stores an interrupt batch (its interrupts, its expiry policy) and `outbox`, and marks the thread
   * interrupted. Fenced. Revision: +1.
   */
  createBatch(batch: NewBatch): Promise<void>

  /**
   * Ends a run: records status + outcome (only if it is still `running`: otherwise nothing is
   * written and the answer is `undefined`), settles `closeCalls` (each conditionally, with its
   * tool message), stores `state`, appends the last events, closes the batch the run claimed,
   * releases the thread (idle or interrupted), writes `outbox` and bumps the revision — one
   * transaction, so the terminal event is in the log before another run can start on the thread.
   * Revision: +1 for the whole transaction (closed calls and `state` included); 0 when nothing is
   * written.
   */
  finishRun(request: FinishRunRequest): Promise<StoredEvent[] | undefined>

  /** Sets the run's cancel flag if it is running (executors check it at their stop points). Returns the run. Revision: 0. */
  requestCancel(threadId: string, runId: string, now: number): Promise<RunRecord | undefined>
  /**
   * The executor's lease renewal: extends `leaseUntil` of every run this executor is running and
   * returns them with their cancel flag (a run missing from the answer was taken over). Revision: 0.
   */
  heartbeatRuns(executorId: string, leaseUntil: number): Promise<RunHeartbeat[]>
  /** Runs still `running` whose lease ended before `now` (or every running run with `all`). */
  listAbandonedRuns(query: AbandonedRunsQuery): Promise<RunKey[]>
  /**
   * Takes over an abandoned run before closing it (conditional update): only while it is running
   * and its lease has ended (or with `force`). The winner gets the run, everybody else `undefined`.
   * Revision: 0.
   */
  takeOverRun(request: TakeOverRequest): Promise<RunRecord | undefined>

  // ---- approvals from anywhere (docs/approvals.md): decision records, the inbox, deadlines, webhooks.
  // None of these is fenced and none changes a revision (0).

  /** The thread's decision records, oldest first. */
  listDecisions(threadId: string): Promise<DecisionRecord[]>
  /** The decision the resume run `runId` carries out. */
  getDecision(threadId: string, runId: string): Promise<DecisionRecord | undefined>
  /**
   * Every `pending` batch of every owner (expired or not), with the thread's owner and title,
   * newest first by `(createdAt, batchId)`; the caller filters by who may decide. One query.
   */
  listPendingBatches(query: PendingBatchQuery): Promise<PendingBatchRecord[]>
  /**
   * `pending` batches whose deadline has passed (`expiresAt <= now`) and whose policy decides
   * something (not `keep`), earliest deadline first: the expiry sweep, served by the index on the
   * deadline of open batches.
   */
  listDueBatches(query: DueBatchQuery): Promise<BatchRecord[]>
  /**
   * Locks up to `limit` `pending` deliveries due at `now` whose lock is free or has ended, oldest
   * first, to `executorId` until `lockUntil`, atomically: two senders never get the same row
   * (PostgreSQL skips rows another transaction is locking).
   */
  claimOutbox(request: ClaimOutboxRequest): Promise<OutboxDelivery[]>
  /**
   * Records an attempt (attempts + 1) and releases the lock: `delivered`, `failed` (with the error),
   * or `retry` (pending again at `nextAttemptAt`, with the error). Only by the executor holding
   * the lock: otherwise `false` and nothing changes.
   */
  settleOutbox(settlement: OutboxSettlement): Promise<boolean>
  /** Deliveries, oldest first (tests and operators). */
  listOutbox(filter?: OutboxFilter): Promise<OutboxDelivery[]>

  // ---- remembered permissions (docs/approvals.md#remembered-permissions). Not fenced, revision 0.

  /** Stores a rule; a rule whose id exists already is left as it is (the id derives from the approval). */
  addPermissionRule(rule: PermissionRule): Promise<void>
  /** The owner's active rules, oldest first; `filter.threadId` keeps principal rules and that thread's rules. */
  listPermissionRules(owner: string, filter?: PermissionRuleFilter): Promise<PermissionRule[]>
  /** The rules that may approve one call (one indexed query; the caller still checks `argsMatch`). */
  matchPermissionRules(query: PermissionRuleMatch): Promise<PermissionRule[]>
  /** Revokes the owner's active rule: `false` when there is none with that id (or it is revoked already). */
  revokePermissionRule(owner: string, ruleId: string, at: number): Promise<boolean>
  /** Stores the `via: "rule"` record of one call (once per `toolCallId`); `listDecisions` includes it. */
  addRuleDecision(record: DecisionRecord): Promise<void>
  /**
   * Adds an approval that went stale to the decision record the run `runId` carries out (docs/approvals.md#stale-approvals;
   * once per interrupt id) and returns the record as it is now. Fenced: `RunNotActiveError` unless `runId` is the
   * thread's active run. Revision: 0.
   */
  markDecisionStale(threadId: string, runId: string, interruptId: string): Promise<DecisionRecord | undefined>

  // ---- per-call checkpoints of tools that ask from inside `execute` (docs/approvals.md#asking-from-inside-a-tool)

  /** The checkpoint JSON of one call, if it has one. */
  getToolCheckpoint(threadId: string, toolCallId: string): Promise<string | undefined>
  /** Stores (replaces) a call's checkpoint; fenced: `RunNotActiveError` unless `runId` is the thread's active run. */
  saveToolCheckpoint(request: SaveToolCheckpoint): Promise<void>

  /** Thread forks (docs/time-travel.md); optional for host stores: without it the fork routes answer 404. */
  readonly forks?: ForkStore
  /** Decision links already used (docs/approvals.md#deciding-outside-the-app), written by claims with a `linkId`. */
  readonly decisionLinks: DecisionLinkStore

  /**
   * Bounded grants (docs/approvals.md#bounded-grants); optional for host stores: without it an approval with a grant is
   * refused and the grant routes list nothing. A store with it writes `ClaimBatchRequest.grants` with the claim.
   */
  readonly grants?: GrantStore

  /**
   * Optional change feed from other processes (PostgreSQL LISTEN/NOTIFY): appended events and
   * cancel requests. Readers treat it as a wake-up only; they always read the log.
   */
  watch?(listener: (change: StoreChange) => void): () => void
}
