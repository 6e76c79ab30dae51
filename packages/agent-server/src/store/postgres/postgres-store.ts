import type pg from 'pg'
import type { DecisionRecord, Message, PermissionRule } from '@interlude/protocol'
import type { PermissionRuleFilter, PermissionRuleMatch } from '../permission-rules.ts'
import { mergeDecisions } from '../permission-rules.ts'
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
  StoreChange,
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
import { soloClaim } from './votes.ts'
import { getAdmissionView } from './admission-view.ts'
import { appendEventsTx } from './appends.ts'
import * as approvals from './approval-reads.ts'
import { markDecisionStaleTx } from './stale-decisions.ts'
import * as batches from './batches.ts'
import { PgDatabase } from './database.ts'
import { finishRunTx } from './finish-run.ts'
import * as log from './log-reads.ts'
import type { PostgresPool, PostgresStoreOptions } from './options.ts'
import * as outbox from './outbox.ts'
import * as rules from './permission-rules.ts'
import * as runs from './runs.ts'
import * as settings from './settings.ts'
import * as sql from './statements.ts'
import * as threads from './thread-reads.ts'
import * as threadWrites from './thread-writes.ts'
import * as checkpoints from './tool-checkpoints.ts'
import * as toolCalls from './tool-calls.ts'
import * as tokens from './usage.ts'
import * as queue from './run-queue.ts'
import { postgresForks } from './forks.ts'
import { postgresGrants } from './grants.ts'
import { postgresDecisionLinks } from './decision-links.ts'
import type { DecisionLinkStore } from '../decision-links.ts'
import type { EnqueueRequest, EnqueueResult, QueuedInput, TakenSteers, TakeSteersRequest } from '../run-queue.ts'

// The option types live beside the store; importers keep naming them from here.
export { DEFAULT_SCHEMA } from './options.ts'
export type { PostgresPool, PostgresPoolSettings, PostgresStoreOptions } from './options.ts'

/**
 * The PostgreSQL store (`pg` Pool), for several server replicas on one database, with the SQLite store's semantics
 * (pinned by the shared conformance suite). Races are decided by single conditional statements or short transactions
 * that lock the thread row first (thread row, then that thread's rows, everywhere). Once `appendEvents` (one
 * statement) committed, the new log head is NOTIFYed on the schema's channel (`notifier.ts`, coalesced); `watch()`
 * LISTENs on it. Each method goes to its concept's file, on the run or the admission pool of `database.ts`, in a
 * transaction where one is needed; the SQL is in `statements.ts`, why a write was refused in `../refusals.ts`.
 */
export class PostgresStore implements Store {
  readonly kind = 'postgres'
  readonly schema: string
  readonly channel: string
  /** Pools, claim groups, NOTIFY and LISTEN (`database.ts`). */
  readonly #db: PgDatabase
  readonly #pool: pg.Pool
  /** Admission only: latency-critical, never behind run traffic. */
  readonly #admission: pg.Pool
  readonly #now: Clock
  readonly forks: ForkStore
  readonly grants: GrantStore
  readonly decisionLinks: DecisionLinkStore

  private constructor(db: PgDatabase, now: Clock) {
    this.#db = db
    this.schema = db.schema
    this.channel = db.channel
    this.#pool = db.pool
    this.#admission = db.admission
    this.#now = now
    this.forks = postgresForks(db.pool)
    this.grants = postgresGrants(db.pool, db.takes)
    this.decisionLinks = postgresDecisionLinks(db.pool)
  }

  /** Connects, creates the schema on first start and applies migrations. */
  static async open(options: PostgresStoreOptions): Promise<PostgresStore> {
    const now = options.now ?? systemClock
    return new PostgresStore(await PgDatabase.open(options, now), now)
  }

  /** The pool, for tests and tooling. */
  get pool(): PostgresPool {
    return this.#pool as unknown as PostgresPool
  }

  async ping(): Promise<void> {
    await this.#pool.query(sql.ping())
  }

  async probeWrite(): Promise<void> {
    await settings.probeWrite(this.#pool)
  }

  async close(): Promise<void> {
    await this.#db.close()
  }

  watch(listener: (change: StoreChange) => void): () => void {
    return this.#db.watch(listener)
  }

  async getOrCreateSetting(key: string, create: () => string): Promise<string> {
    return settings.getOrCreateSetting(this.#pool, key, create)
  }

  async enqueueInput(request: EnqueueRequest): Promise<EnqueueResult> {
    return queue.enqueueInput(this.#pool, request)
  }

  async listQueuedInputs(threadId: string): Promise<QueuedInput[]> {
    return queue.listQueuedInputs(this.#pool, threadId)
  }

  async removeQueuedInput(threadId: string, runId: string): Promise<boolean> {
    return queue.removeQueuedInput(this.#pool, threadId, runId)
  }

  async listStartableQueues(limit: number): Promise<string[]> {
    return queue.listStartableQueues(this.#pool, limit)
  }

  async hasSteers(threadId: string): Promise<boolean> {
    return queue.hasSteers(this.#pool, threadId)
  }

  async takeSteers(request: TakeSteersRequest): Promise<TakenSteers> {
    const taken = await queue.takeSteers(this.#pool, request)
    const last = taken.events[taken.events.length - 1]
    if (last) this.#db.notifier.announce(request.threadId, last.seq)
    return taken
  }

  async messageRunId(threadId: string, messageId: string): Promise<string | undefined> {
    return queue.messageRunId(this.#pool, threadId, messageId)
  }

  async countRunningRuns(ownerId: string): Promise<number> {
    return threads.countRunningRuns(this.#pool, ownerId)
  }

  async getThread(threadId: string): Promise<ThreadRecord | undefined> {
    return threads.getThread(this.#pool, threadId)
  }

  async getAdmissionView(
    threadId: string,
    runId: string,
    options: AdmissionViewOptions,
  ): Promise<AdmissionView | undefined> {
    return getAdmissionView(this.#admission, threadId, runId, options)
  }

  async listThreads(ownerId: string, query: ThreadQuery): Promise<ThreadRecord[]> {
    return threads.listThreads(this.#pool, ownerId, query)
  }

  async listMessages(threadId: string): Promise<Message[]> {
    return threads.listMessages(this.#pool, threadId)
  }

  async listMessagePage(threadId: string, query: MessagePageQuery): Promise<StoredMessage[]> {
    return threads.listMessagePage(this.#pool, threadId, query)
  }

  async getFirstUserMessage(threadId: string): Promise<StoredMessage | undefined> {
    return threads.getFirstUserMessage(this.#pool, threadId)
  }

  async listToolCallIds(threadId: string): Promise<string[]> {
    return toolCalls.listToolCallIds(this.#pool, threadId)
  }

  async addRunUsage(
    threadId: string,
    runId: string,
    usage: { inputTokens: number; outputTokens: number },
  ): Promise<void> {
    await tokens.addRunUsage(this.#pool, threadId, runId, usage)
  }

  async sumUsage(scope: UsageScope): Promise<UsageCounts> {
    return tokens.sumUsage(this.#pool, scope)
  }

  async getRun(threadId: string, runId: string): Promise<RunRecord | undefined> {
    return runs.getRun(this.#pool, threadId, runId)
  }

  async getOpenBatch(threadId: string): Promise<BatchRecord | undefined> {
    return batches.getOpenBatch(this.#pool, threadId)
  }

  async getBatchOfInterrupt(threadId: string, interruptId: string): Promise<BatchRecord | undefined> {
    return batches.getBatchOfInterrupt(this.#admission, threadId, interruptId)
  }

  async listToolCalls(
    threadId: string,
    filter: { readonly status?: readonly ToolCallStatus[] } = {},
  ): Promise<ToolCallRecord[]> {
    return toolCalls.listToolCalls(this.#pool, threadId, filter)
  }

  async getToolCall(threadId: string, toolCallId: string): Promise<ToolCallRecord | undefined> {
    return toolCalls.getToolCall(this.#pool, threadId, toolCallId)
  }

  async startInputRun(request: StartInputRunRequest): Promise<StartRunResult> {
    return this.#db.tx((q) => admission.startInputRunTx(q, request), this.#admission)
  }

  async claimBatch(request: ClaimBatchRequest): Promise<ClaimBatchResult> {
    // A vote, a link's claim or one that makes grants is a transaction of its own, never one of a group (votes.ts).
    return soloClaim(this.#db, this.#admission, request) ?? this.#db.claims.claim(request)
  }

  async appendEvents(threadId: string, runId: string, events: readonly NewEvent[]): Promise<StoredEvent[]> {
    if (events.length === 0) return []
    const stored = await appendEventsTx(this.#pool, threadId, runId, events)
    this.#db.notifier.announce(threadId, stored[stored.length - 1]!.seq)
    return stored
  }

  async readEvents(threadId: string, query: EventQuery): Promise<StoredEvent[]> {
    return log.readEvents(this.#pool, threadId, query)
  }

  async pollThreads(threadIds: readonly string[]): Promise<ThreadHead[]> {
    return log.pollThreads(this.#pool, threadIds)
  }

  async appendMessages(threadId: string, runId: string, messages: readonly Message[]): Promise<void> {
    if (messages.length === 0) return
    await this.#db.tx((q) => threadWrites.appendRunMessagesTx(q, threadId, runId, messages, this.#now))
  }

  async setState(threadId: string, state: unknown): Promise<void> {
    await threadWrites.setState(this.#pool, threadId, state, this.#now())
  }

  async insertToolCalls(records: readonly NewToolCall[]): Promise<void> {
    if (records.length === 0) return
    await this.#db.tx((q) => toolCalls.insertToolCallsTx(q, records))
  }

  async beginEffect(threadId: string, toolCallId: string, runId: string, now: number): Promise<BeginEffectResult> {
    return toolCalls.beginEffect(this.#pool, threadId, toolCallId, runId, now)
  }

  async settleToolCall(request: SettleToolCallRequest): Promise<void> {
    await this.#db.tx((q) => toolCalls.settleToolCallTx(q, request))
  }

  async reconcileEffect(request: ReconcileEffectRequest): Promise<boolean> {
    return toolCalls.reconcileEffect(this.#pool, request)
  }

  async claimToolCall(request: ClaimToolCallRequest): Promise<ClaimToolCallResult> {
    return toolCalls.claimToolCall(this.#pool, request)
  }

  async createBatch(batch: NewBatch): Promise<void> {
    await this.#db.tx((q) => batches.createBatchTx(q, batch))
  }

  async finishRun(request: FinishRunRequest): Promise<StoredEvent[] | undefined> {
    const stored = await this.#db.tx((q) => finishRunTx(q, request))
    const last = stored?.[stored.length - 1]
    if (last) this.#db.notifier.announce(request.threadId, last.seq)
    return stored
  }

  async requestCancel(threadId: string, runId: string, now: number): Promise<RunRecord | undefined> {
    return runs.requestCancel(this.#pool, threadId, runId, now, this.channel)
  }

  async heartbeatRuns(executorId: string, leaseUntil: number): Promise<RunHeartbeat[]> {
    return runs.heartbeatRuns(this.#pool, executorId, leaseUntil)
  }

  async listAbandonedRuns(query: AbandonedRunsQuery): Promise<RunKey[]> {
    return runs.listAbandonedRuns(this.#pool, query)
  }

  async takeOverRun(request: TakeOverRequest): Promise<RunRecord | undefined> {
    return runs.takeOverRun(this.#pool, request)
  }

  async listDecisions(threadId: string): Promise<DecisionRecord[]> {
    const [byBatches, byRules] = await Promise.all([
      approvals.listDecisions(this.#pool, threadId),
      rules.listRuleDecisions(this.#pool, threadId),
    ])
    return mergeDecisions(byBatches, byRules)
  }

  async getDecision(threadId: string, runId: string): Promise<DecisionRecord | undefined> {
    return approvals.getDecision(this.#pool, threadId, runId)
  }

  async listPendingBatches(query: PendingBatchQuery): Promise<PendingBatchRecord[]> {
    return approvals.listPendingBatches(this.#pool, query)
  }

  async listDueBatches(query: DueBatchQuery): Promise<BatchRecord[]> {
    return approvals.listDueBatches(this.#pool, query)
  }

  async claimOutbox(request: ClaimOutboxRequest): Promise<OutboxDelivery[]> {
    return outbox.claimOutbox(this.#pool, request)
  }

  async settleOutbox(settlement: OutboxSettlement): Promise<boolean> {
    return outbox.settleOutbox(this.#pool, settlement)
  }

  async listOutbox(filter: OutboxFilter = {}): Promise<OutboxDelivery[]> {
    return outbox.listOutbox(this.#pool, filter)
  }

  async addPermissionRule(rule: PermissionRule): Promise<void> {
    await rules.addPermissionRule(this.#pool, rule)
  }

  async listPermissionRules(owner: string, filter?: PermissionRuleFilter): Promise<PermissionRule[]> {
    return rules.listPermissionRules(this.#pool, owner, filter)
  }

  async matchPermissionRules(query: PermissionRuleMatch): Promise<PermissionRule[]> {
    return rules.matchPermissionRules(this.#pool, query)
  }

  async revokePermissionRule(owner: string, ruleId: string, at: number): Promise<boolean> {
    return rules.revokePermissionRule(this.#pool, owner, ruleId, at)
  }

  async addRuleDecision(record: DecisionRecord): Promise<void> {
    await rules.addRuleDecision(this.#pool, record)
  }

  async markDecisionStale(threadId: string, runId: string, interruptId: string): Promise<DecisionRecord | undefined> {
    return this.#db.tx((q) => markDecisionStaleTx(q, threadId, runId, interruptId))
  }

  async getToolCheckpoint(threadId: string, toolCallId: string): Promise<string | undefined> {
    return checkpoints.getToolCheckpoint(this.#pool, threadId, toolCallId)
  }

  async saveToolCheckpoint(request: SaveToolCheckpoint): Promise<void> {
    await this.#db.tx((q) => checkpoints.saveToolCheckpointTx(q, request))
  }
}

/** Opens (creating schema and tables on first start) the PostgreSQL store. */
export function createPostgresStore(options: PostgresStoreOptions): Promise<Store> {
  return PostgresStore.open(options)
}
