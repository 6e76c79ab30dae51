import type Database from 'better-sqlite3'
import { prepareForkKeyGuard } from './fork-write.ts'
import { sqliteForks } from './forks.ts'
import { sqliteGrants } from './grants.ts'
import type { DecisionRecord, Grant, Message, PermissionRule } from '@interlude/protocol'
import { mergeDecisions, type PermissionRuleFilter, type PermissionRuleMatch } from '../permission-rules.ts'
import { systemClock, type Clock } from '../../clock.ts'
import type {
  ForkStore,
  GrantStore,
  AbandonedRunsQuery,
  AdmissionView,
  AdmissionViewOptions,
  BatchRecord,
  BeginEffectResult,
  ClaimBatchRequest,
  ClaimBatchResult,
  ClaimOutboxRequest,
  DueBatchQuery,
  EventQuery,
  FinishRunRequest,
  MessagePageQuery,
  NewBatch,
  NewEvent,
  NewToolCall,
  OutboxDelivery,
  OutboxFilter,
  OutboxSettlement,
  PendingBatchQuery,
  PendingBatchRecord,
  RunHeartbeat,
  RunKey,
  RunRecord,
  ReconcileEffectRequest,
  ClaimToolCallRequest,
  ClaimToolCallResult,
  SettleToolCallRequest,
  StartInputRunRequest,
  StartRunResult,
  Store,
  StoredEvent,
  StoredMessage,
  TakeOverRequest,
  ThreadHead,
  ThreadQuery,
  ThreadRecord,
  ToolCallRecord,
  ToolCallStatus,
  UsageCounts,
  UsageScope,
} from '../store.ts'
import type { SaveToolCheckpoint } from '../tool-checkpoints.ts'
import * as admission from './admission.ts'
import { admissionView } from './admission-view.ts'
import { appendEventsTx, fenceTx } from './appends.ts'
import * as approvals from './approval-reads.ts'
import * as batches from './batches.ts'
import { finishRunTx } from './finish-run.ts'
import * as log from './log-reads.ts'
import { closeSqliteDatabase, openSqliteDatabase } from './open-database.ts'
import * as outbox from './outbox.ts'
import { preparePermissionRules } from './permission-rules.ts'
import * as runs from './runs.ts'
import { sqliteRunQueue } from './run-queue.ts'
import type { EnqueueRequest, EnqueueResult, QueuedInput, TakenSteers, TakeSteersRequest } from '../run-queue.ts'
import * as settings from './settings.ts'
import type { SqliteDatabase } from './sqlite-database.ts'
import { prepareStatements, type SqliteStatements } from './statements.ts'
import * as threads from './thread-reads.ts'
import * as threadWrites from './thread-writes.ts'
import { prepareToolCheckpoints } from './tool-checkpoints.ts'
import { prepareStaleDecisions } from './stale-decisions.ts'
import * as toolCalls from './tool-calls.ts'
import { sqliteUsage } from './usage.ts'
import { writeTransaction } from './write-transaction.ts'

export interface SqliteStoreOptions {
  /** Milliseconds a writer waits for another process's lock. @default 5000 */
  readonly busyTimeoutMs?: number
  /** Clock of the timestamps the store writes itself (methods given a `now` use that). @default systemClock */
  readonly now?: Clock
}

/**
 * The embedded store: one SQLite file in WAL mode via better-sqlite3 (synchronous: every transaction below is atomic
 * within the process; `BEGIN IMMEDIATE` serialises writers across processes), created with its directory on first
 * start (`open-database.ts`), versioned by migrations. Each method goes to its concept's file, in one write transaction
 * where it writes; the SQL is in `statements.ts`, why a write was refused in `../refusals.ts` (shared with PostgreSQL).
 */
export class SqliteStore implements Store {
  readonly kind = 'sqlite'
  readonly path: string
  readonly #db: Database.Database
  readonly #s: SqliteStatements
  readonly #forkKeyHeld: (threadId: string, now: number) => boolean
  readonly #queue: ReturnType<typeof sqliteRunQueue>
  readonly #rules: ReturnType<typeof preparePermissionRules>
  readonly #usage: ReturnType<typeof sqliteUsage>
  readonly #checkpoints: ReturnType<typeof prepareToolCheckpoints>
  readonly #stale: ReturnType<typeof prepareStaleDecisions>
  readonly #now: Clock
  readonly forks: ForkStore
  readonly grants: GrantStore & { insertTx(grants: readonly Grant[] | undefined): void }
  readonly decisionLinks = { used: (linkId: string) => this.#s.decisionLinks.used(linkId) }
  #closed = false

  constructor(file: string, options: SqliteStoreOptions = {}) {
    this.path = file
    this.#now = options.now ?? systemClock
    this.#db = openSqliteDatabase(file, options.busyTimeoutMs ?? 5000)
    this.#s = prepareStatements(this.#db)
    this.#rules = preparePermissionRules(this.#db)
    this.#usage = sqliteUsage(this.#db)
    this.#queue = sqliteRunQueue(this.#db)
    this.#checkpoints = prepareToolCheckpoints(this.#db)
    this.#stale = prepareStaleDecisions(this.#db)
    this.forks = sqliteForks(this.#db)
    this.grants = sqliteGrants(this.#db)
    this.#forkKeyHeld = prepareForkKeyGuard(this.#db)
  }

  /** Direct access for tests and tooling (e.g. a before/after dump). */
  get database(): SqliteDatabase {
    return this.#db
  }

  async ping(): Promise<void> {
    this.#s.ping.get()
  }

  async probeWrite(): Promise<void> {
    this.#write(() => settings.probeWriteTx(this.#s))
  }

  async close(): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    await closeSqliteDatabase(this.#db)
  }

  async getOrCreateSetting(key: string, create: () => string): Promise<string> {
    return this.#write(() => settings.getOrCreateSettingTx(this.#s, key, create))
  }

  async countRunningRuns(ownerId: string): Promise<number> {
    return threads.countRunningRuns(this.#s, ownerId)
  }

  async getThread(threadId: string): Promise<ThreadRecord | undefined> {
    return threads.getThread(this.#s, threadId)
  }

  async getAdmissionView(
    threadId: string,
    runId: string,
    options: AdmissionViewOptions,
  ): Promise<AdmissionView | undefined> {
    return admissionView(this.#db, this.#s, threadId, runId, options)
  }

  async listThreads(ownerId: string, query: ThreadQuery): Promise<ThreadRecord[]> {
    return threads.listThreads(this.#s, ownerId, query)
  }

  async listMessages(threadId: string): Promise<Message[]> {
    return threads.listMessages(this.#s, threadId)
  }

  async listMessagePage(threadId: string, query: MessagePageQuery): Promise<StoredMessage[]> {
    return threads.listMessagePage(this.#s, threadId, query)
  }

  async getFirstUserMessage(threadId: string): Promise<StoredMessage | undefined> {
    return threads.getFirstUserMessage(this.#s, threadId)
  }

  async listToolCallIds(threadId: string): Promise<string[]> {
    return toolCalls.listToolCallIds(this.#s, threadId)
  }

  async getRun(threadId: string, runId: string): Promise<RunRecord | undefined> {
    return runs.getRun(this.#s, threadId, runId)
  }

  async addRunUsage(
    threadId: string,
    runId: string,
    usage: { inputTokens: number; outputTokens: number },
  ): Promise<void> {
    this.#write(() => this.#usage.add(threadId, runId, usage))
  }

  async sumUsage(scope: UsageScope): Promise<UsageCounts> {
    return this.#usage.sum(scope)
  }

  async getOpenBatch(threadId: string): Promise<BatchRecord | undefined> {
    return batches.getOpenBatch(this.#s, threadId)
  }

  async getBatchOfInterrupt(threadId: string, interruptId: string): Promise<BatchRecord | undefined> {
    return batches.getBatchOfInterrupt(this.#s, threadId, interruptId)
  }

  async listToolCalls(
    threadId: string,
    filter: { readonly status?: readonly ToolCallStatus[] } = {},
  ): Promise<ToolCallRecord[]> {
    return toolCalls.listToolCalls(this.#s, threadId, filter)
  }

  async getToolCall(threadId: string, toolCallId: string): Promise<ToolCallRecord | undefined> {
    return toolCalls.getToolCall(this.#s, threadId, toolCallId)
  }

  async startInputRun(request: StartInputRunRequest): Promise<StartRunResult> {
    return this.#write(() => admission.startInputRunTx(this.#s, request, this.#forkKeyHeld))
  }

  async claimBatch(request: ClaimBatchRequest): Promise<ClaimBatchResult> {
    return this.#write(() => admission.claimBatchTx(this.#s, request, this.grants.insertTx))
  }

  async claimBatches(requests: readonly ClaimBatchRequest[]): Promise<ClaimBatchResult[]> {
    return this.#write(() => admission.claimBatchesTx(this.#db, this.#s, requests, this.grants.insertTx))
  }

  async appendEvents(threadId: string, runId: string, events: readonly NewEvent[]): Promise<StoredEvent[]> {
    if (events.length === 0) return []
    return this.#write(() => appendEventsTx(this.#s, threadId, runId, events))
  }

  async readEvents(threadId: string, query: EventQuery): Promise<StoredEvent[]> {
    return log.readEvents(this.#s, threadId, query)
  }

  async pollThreads(threadIds: readonly string[]): Promise<ThreadHead[]> {
    return log.pollThreads(this.#s, threadIds)
  }

  async appendMessages(threadId: string, runId: string, messages: readonly Message[]): Promise<void> {
    if (messages.length === 0) return
    this.#write(() => threadWrites.appendRunMessagesTx(this.#s, threadId, runId, messages, this.#now))
  }

  async setState(threadId: string, state: unknown): Promise<void> {
    this.#write(() => threadWrites.setStateTx(this.#s, threadId, state, this.#now))
  }

  async insertToolCalls(records: readonly NewToolCall[]): Promise<void> {
    if (records.length === 0) return
    this.#write(() => toolCalls.insertToolCallsTx(this.#s, records))
  }

  async beginEffect(threadId: string, toolCallId: string, runId: string, now: number): Promise<BeginEffectResult> {
    return this.#write(() => toolCalls.beginEffectTx(this.#s, threadId, toolCallId, runId, now))
  }

  async settleToolCall(request: SettleToolCallRequest): Promise<void> {
    this.#write(() => toolCalls.settleToolCallTx(this.#s, request))
  }

  async reconcileEffect(request: ReconcileEffectRequest): Promise<boolean> {
    return this.#write(() => toolCalls.reconcileEffectTx(this.#s, request))
  }

  async claimToolCall(request: ClaimToolCallRequest): Promise<ClaimToolCallResult> {
    return this.#write(() => toolCalls.claimToolCallTx(this.#s, request))
  }

  async createBatch(batch: NewBatch): Promise<void> {
    this.#write(() => batches.createBatchTx(this.#s, batch))
  }

  async finishRun(request: FinishRunRequest): Promise<StoredEvent[] | undefined> {
    return this.#write(() => finishRunTx(this.#s, request))
  }

  async requestCancel(threadId: string, runId: string, now: number): Promise<RunRecord | undefined> {
    return this.#write(() => runs.requestCancelTx(this.#s, threadId, runId, now))
  }

  async heartbeatRuns(executorId: string, leaseUntil: number): Promise<RunHeartbeat[]> {
    return this.#write(() => runs.heartbeatRunsTx(this.#s, executorId, leaseUntil))
  }

  async listAbandonedRuns(query: AbandonedRunsQuery): Promise<RunKey[]> {
    return runs.listAbandonedRuns(this.#s, query)
  }

  async takeOverRun(request: TakeOverRequest): Promise<RunRecord | undefined> {
    return this.#write(() => runs.takeOverRunTx(this.#s, request))
  }

  async listDecisions(threadId: string): Promise<DecisionRecord[]> {
    return mergeDecisions(approvals.listDecisions(this.#s, threadId), this.#rules.decisions(threadId))
  }

  async getDecision(threadId: string, runId: string): Promise<DecisionRecord | undefined> {
    return approvals.getDecision(this.#s, threadId, runId)
  }

  async listPendingBatches(query: PendingBatchQuery): Promise<PendingBatchRecord[]> {
    return approvals.listPendingBatches(this.#s, query)
  }

  async listDueBatches(query: DueBatchQuery): Promise<BatchRecord[]> {
    return approvals.listDueBatches(this.#s, query)
  }

  async claimOutbox(request: ClaimOutboxRequest): Promise<OutboxDelivery[]> {
    return this.#write(() => outbox.claimOutboxTx(this.#s, request))
  }

  async settleOutbox(settlement: OutboxSettlement): Promise<boolean> {
    return this.#write(() => outbox.settleOutboxTx(this.#s, settlement))
  }

  async listOutbox(filter: OutboxFilter = {}): Promise<OutboxDelivery[]> {
    return outbox.listOutbox(this.#s, filter)
  }

  async addPermissionRule(rule: PermissionRule): Promise<void> {
    this.#write(() => this.#rules.add(rule))
  }

  async listPermissionRules(owner: string, filter?: PermissionRuleFilter): Promise<PermissionRule[]> {
    return this.#rules.list(owner, filter)
  }

  async matchPermissionRules(query: PermissionRuleMatch): Promise<PermissionRule[]> {
    return this.#rules.match(query)
  }

  async revokePermissionRule(owner: string, ruleId: string, at: number): Promise<boolean> {
    return this.#write(() => this.#rules.revoke(owner, ruleId, at))
  }

  async addRuleDecision(record: DecisionRecord): Promise<void> {
    this.#write(() => this.#rules.addDecision(record))
  }

  async markDecisionStale(threadId: string, runId: string, interruptId: string): Promise<DecisionRecord | undefined> {
    return this.#write(() => {
      fenceTx(this.#s, threadId, runId)
      return this.#stale.mark(threadId, runId, interruptId)
    })
  }

  async getToolCheckpoint(threadId: string, toolCallId: string): Promise<string | undefined> {
    return this.#checkpoints.get(threadId, toolCallId)
  }

  async saveToolCheckpoint(request: SaveToolCheckpoint): Promise<void> {
    this.#write(() => {
      fenceTx(this.#s, request.threadId, request.runId)
      this.#checkpoints.put(request)
      if (request.stateJson !== undefined)
        this.#s.setState.run({ threadId: request.threadId, stateJson: request.stateJson, now: request.now })
    })
  }

  async enqueueInput(request: EnqueueRequest): Promise<EnqueueResult> {
    return this.#write(() => this.#queue.enqueueTx(request))
  }

  async listQueuedInputs(threadId: string): Promise<QueuedInput[]> {
    return this.#queue.list(threadId)
  }

  async removeQueuedInput(threadId: string, runId: string): Promise<boolean> {
    return this.#write(() => this.#queue.removeTx(threadId, runId))
  }

  async listStartableQueues(limit: number): Promise<string[]> {
    return this.#queue.startable(limit)
  }

  async hasSteers(threadId: string): Promise<boolean> {
    return this.#queue.hasSteers(threadId)
  }

  async takeSteers(request: TakeSteersRequest): Promise<TakenSteers> {
    return this.#write(() => this.#queue.takeTx(this.#s, request))
  }

  async messageRunId(threadId: string, messageId: string): Promise<string | undefined> {
    return this.#queue.messageRunId(threadId, messageId)
  }

  /** Runs `fn` in a `BEGIN IMMEDIATE` transaction (`write-transaction.ts`). */
  #write<T>(fn: () => T): T {
    return writeTransaction(this.#db, fn)
  }
}

/** Opens (creating on first start) the SQLite store at `file`. */
export function createSqliteStore(file: string, options: SqliteStoreOptions = {}): Store {
  return new SqliteStore(file, options)
}
