import fs from 'node:fs'
import path from 'node:path'
import type Database from 'better-sqlite3'
import type { DecisionRecord, Message, PermissionRule } from '@interlude/protocol'
import type { PermissionRuleFilter, PermissionRuleMatch } from '../permission-rules.ts'
import { mergeDecisions } from '../permission-rules.ts'
import type { Clock } from '../../clock.ts'
import { systemClock } from '../../clock.ts'
import type {
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
import { sqliteUsage } from './usage.ts'
import type { BatchRow } from '../rows.ts'
import {
  toBatch,
  toRun,
  toRunHeartbeat,
  toRunKey,
  toStoredEvent,
  toStoredMessage,
  toThread,
  toThreadHead,
  toToolCall,
} from '../rows.ts'
import { effectRefusal } from '../refusals.ts'
import { rolledBack } from '../rollback-with.ts'
import { claimBatchesTx, claimBatchTx, startInputRunTx } from './admission.ts'
import { appendEventsTx, appendMessagesTx, fenceTx } from './appends.ts'
import { getDecision, listDecisions, listDueBatches, listPendingBatches } from './approval-reads.ts'
import { migrate } from './migrations.ts'
import { claimOutboxTx, insertOutboxTx, listOutbox, settleOutboxTx } from './outbox.ts'
import { preparePermissionRules } from './permission-rules.ts'
import { prepareStatements } from './statements.ts'
import type { SqliteStatements } from './statements.ts'
import type { SqliteDatabase } from './sqlite-database.ts'
import { loadSqlite } from './sqlite-module.ts'
import { prepareToolCheckpoints } from './tool-checkpoints.ts'
import type { SaveToolCheckpoint } from '../tool-checkpoints.ts'
import { probeValue, READINESS_PROBE_KEY } from '../store-errors.ts'

export interface SqliteStoreOptions {
  /** Milliseconds a writer waits for another process's lock. @default 5000 */
  readonly busyTimeoutMs?: number
  /** Clock of the timestamps the store writes itself (methods given a `now` use that). @default systemClock */
  readonly now?: Clock
}

/**
 * The embedded store: one SQLite file in WAL mode via better-sqlite3 (synchronous, so every
 * transaction below is atomic within the process; `BEGIN IMMEDIATE` serialises writers across
 * processes). Created with its directory on first start; schema versioned by migrations. The SQL
 * is in `statements.ts`; why a write was refused is decided in `../refusals.ts`, shared with PostgreSQL.
 */
export class SqliteStore implements Store {
  readonly kind = 'sqlite'
  readonly path: string
  readonly #db: Database.Database
  readonly #s: SqliteStatements
  readonly #rules: ReturnType<typeof preparePermissionRules>
  readonly #usage: ReturnType<typeof sqliteUsage>
  readonly #checkpoints: ReturnType<typeof prepareToolCheckpoints>
  readonly #now: Clock
  #closed = false

  constructor(file: string, options: SqliteStoreOptions = {}) {
    this.path = file
    this.#now = options.now ?? systemClock
    if (file !== ':memory:') {
      // Issue 12, item 6: readable by this user only (a new directory 0700, a new file 0600; SQLite gives its -wal and
      // -shm files the database file's mode).
      fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true, mode: 0o700 })
      fs.closeSync(fs.openSync(file, 'a', 0o600))
    }
    const Driver = loadSqlite()
    this.#db = new Driver(file)
    this.#db.pragma('journal_mode = WAL')
    // NORMAL is durable across process crashes in WAL mode (only an OS crash can lose the tail).
    this.#db.pragma('synchronous = NORMAL')
    this.#db.pragma('foreign_keys = ON')
    this.#db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 5000}`)
    migrate(this.#db)
    this.#s = prepareStatements(this.#db)
    this.#rules = preparePermissionRules(this.#db)
    this.#usage = sqliteUsage(this.#db)
    this.#checkpoints = prepareToolCheckpoints(this.#db)
  }

  /** Direct access for tests and tooling (e.g. a before/after dump). */
  get database(): SqliteDatabase {
    return this.#db
  }

  async ping(): Promise<void> {
    this.#s.ping.get()
  }

  async probeWrite(): Promise<void> {
    // A few pages, so that a disk with a sliver of space left still fails the probe like a run's writes would.
    this.#write(() => this.#s.upsertSetting.run(READINESS_PROBE_KEY, probeValue()))
  }

  async close(): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    this.#db.close()
  }

  async getOrCreateSetting(key: string, create: () => string): Promise<string> {
    return this.#write(() => {
      const row = this.#s.getSetting.get(key)
      if (row) return row.value
      const value = create()
      this.#s.insertSetting.run(key, value)
      return value
    })
  }

  async countRunningRuns(ownerId: string): Promise<number> {
    return this.#s.countRunning.get(ownerId)?.n ?? 0
  }

  async getThread(threadId: string): Promise<ThreadRecord | undefined> {
    const row = this.#s.getThread.get(threadId)
    return row ? toThread(row) : undefined
  }

  async getAdmissionView(
    threadId: string,
    runId: string,
    options: AdmissionViewOptions,
  ): Promise<AdmissionView | undefined> {
    // A deferred transaction is one WAL snapshot: the reads below are mutually consistent.
    return this.#db.transaction((): AdmissionView | undefined => {
      const s = this.#s
      const row = s.getThread.get(threadId)
      if (!row) return undefined
      const run = s.getRun.get(threadId, runId)
      const batch = s.getOpenBatch.get(threadId)
      return {
        thread: toThread(row),
        run: run ? toRun(run) : undefined,
        openBatch: batch ? this.#toBatch(batch) : undefined,
        knownMessageIds: new Set(
          options.history && options.messageIds?.length
            ? s.knownMessageIds.all({ threadId, idsJson: JSON.stringify(options.messageIds) }).map((r) => r.message_id)
            : [],
        ),
        knownToolCallIds: new Set(
          options.history && options.toolCallIds?.length
            ? s.knownToolCallIds
                .all({ threadId, idsJson: JSON.stringify(options.toolCallIds) })
                .map((r) => r.tool_call_id)
            : [],
        ),
        awaitingResults: options.history
          ? s.listToolCallsByStatus.all({ threadId, statusesJson: '["awaiting_result"]' }).map(toToolCall)
          : [],
      }
    })()
  }

  async listThreads(ownerId: string, query: ThreadQuery): Promise<ThreadRecord[]> {
    const after = query.after
    const rows = this.#s.listThreads.all({
      owner: ownerId,
      status: query.status ?? null,
      afterUpdated: after ? after.updatedAt : null,
      afterThread: after ? after.threadId : null,
      pendingAt: query.pendingInterruptsAt ?? null,
      limit: query.limit,
    })
    return rows.map(toThread)
  }

  async listMessages(threadId: string): Promise<Message[]> {
    return this.#messages(threadId)
  }

  async listMessagePage(threadId: string, query: MessagePageQuery): Promise<StoredMessage[]> {
    const rows = this.#s.messagePage.all({
      threadId,
      before: query.beforePosition ?? Number.MAX_SAFE_INTEGER,
      limit: query.limit,
      maxBytes: query.maxBytes ?? Number.MAX_SAFE_INTEGER,
    })
    return rows.map(toStoredMessage)
  }

  async getFirstUserMessage(threadId: string): Promise<StoredMessage | undefined> {
    const row = this.#s.firstUserMessage.get(threadId)
    return row ? toStoredMessage(row) : undefined
  }

  async listToolCallIds(threadId: string): Promise<string[]> {
    return this.#s.listToolCallIds.all(threadId).map((r) => r.tool_call_id)
  }

  async getRun(threadId: string, runId: string): Promise<RunRecord | undefined> {
    const row = this.#s.getRun.get(threadId, runId)
    return row ? toRun(row) : undefined
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
    const row = this.#s.getOpenBatch.get(threadId)
    return row ? this.#toBatch(row) : undefined
  }

  async getBatchOfInterrupt(threadId: string, interruptId: string): Promise<BatchRecord | undefined> {
    const row = this.#s.getBatchOfInterrupt.get(interruptId, threadId)
    return row ? this.#toBatch(row) : undefined
  }

  async listToolCalls(
    threadId: string,
    filter: { readonly status?: readonly ToolCallStatus[] } = {},
  ): Promise<ToolCallRecord[]> {
    const wanted = filter.status
    const rows =
      wanted === undefined
        ? this.#s.listToolCalls.all(threadId)
        : this.#s.listToolCallsByStatus.all({ threadId, statusesJson: JSON.stringify(wanted) })
    return rows.map(toToolCall)
  }

  async getToolCall(threadId: string, toolCallId: string): Promise<ToolCallRecord | undefined> {
    const row = this.#s.getToolCall.get(threadId, toolCallId)
    return row ? toToolCall(row) : undefined
  }

  async startInputRun(request: StartInputRunRequest): Promise<StartRunResult> {
    return this.#write(() => startInputRunTx(this.#s, request))
  }

  async claimBatch(request: ClaimBatchRequest): Promise<ClaimBatchResult> {
    return this.#write(() => claimBatchTx(this.#s, request))
  }

  async claimBatches(requests: readonly ClaimBatchRequest[]): Promise<ClaimBatchResult[]> {
    return requests.length === 0 ? [] : this.#write(() => claimBatchesTx(this.#db, this.#s, requests))
  }

  async appendEvents(threadId: string, runId: string, events: readonly NewEvent[]): Promise<StoredEvent[]> {
    if (events.length === 0) return []
    return this.#write(() => appendEventsTx(this.#s, threadId, runId, events))
  }

  async readEvents(threadId: string, query: EventQuery): Promise<StoredEvent[]> {
    const after = query.afterSeq ?? 0
    const limit = query.limit ?? -1
    const rows =
      query.runId === undefined
        ? this.#s.readEvents.all({ threadId, after, limit })
        : this.#s.readRunEvents.all({ threadId, runId: query.runId, after, limit })
    return rows.map(toStoredEvent)
  }

  async pollThreads(threadIds: readonly string[]): Promise<ThreadHead[]> {
    if (threadIds.length === 0) return []
    return this.#s.pollThreads.all(JSON.stringify(threadIds)).map(toThreadHead)
  }

  async appendMessages(threadId: string, runId: string, messages: readonly Message[]): Promise<void> {
    if (messages.length === 0) return
    this.#write(() => {
      const now = this.#now()
      fenceTx(this.#s, threadId, runId)
      appendMessagesTx(this.#s, threadId, runId, messages, now)
      this.#s.bumpRevision.run({ threadId, now })
    })
  }

  async setState(threadId: string, state: unknown): Promise<void> {
    this.#write(() => {
      this.#s.setState.run({ threadId, stateJson: JSON.stringify(state ?? null), now: this.#now() })
    })
  }

  async insertToolCalls(records: readonly NewToolCall[]): Promise<void> {
    if (records.length === 0) return
    this.#write(() => {
      for (const r of records) {
        fenceTx(this.#s, r.threadId, r.runId)
        this.#s.insertToolCall.run(r)
      }
    })
  }

  async beginEffect(threadId: string, toolCallId: string, runId: string, now: number): Promise<BeginEffectResult> {
    return this.#write((): BeginEffectResult => {
      const s = this.#s
      if (s.beginEffect.run({ threadId, runId, toolCallId, now }).changes === 1) return 'started'
      return effectRefusal({
        active: s.isActive.get({ threadId, runId }) !== undefined,
        cancelRequested: (s.getRun.get(threadId, runId)?.cancel_requested_at ?? null) !== null,
      })
    })
  }

  async settleToolCall(request: SettleToolCallRequest): Promise<void> {
    this.#write(() => {
      const s = this.#s
      const { threadId, runId, now } = request
      fenceTx(s, threadId, runId)
      s.settleToolCall.run({ ...request, result: request.result ?? null })
      if (request.message) appendMessagesTx(s, threadId, runId, [request.message], now)
      if ('state' in request) s.setState.run({ threadId, stateJson: JSON.stringify(request.state ?? null), now })
      else s.bumpRevision.run({ threadId, now })
    })
  }

  async reconcileEffect(request: ReconcileEffectRequest): Promise<boolean> {
    const from = JSON.stringify(['unknown'])
    return this.#write(() => this.#s.closeToolCall.run({ ...request, fromJson: from }).changes === 1)
  }

  async createBatch(batch: NewBatch): Promise<void> {
    this.#write(() => {
      const s = this.#s
      const { batchId, threadId, runId } = batch
      fenceTx(s, threadId, runId)
      s.insertBatch.run(batch)
      batch.interrupts.forEach((item, position) => {
        const json = JSON.stringify(item.interrupt)
        s.insertInterrupt.run({ ...item, interruptId: item.interrupt.id, batchId, threadId, position, json })
      })
      s.markInterrupted.run({ threadId, now: batch.createdAt })
      insertOutboxTx(s, batch.outbox, batch.createdAt)
    })
  }

  async finishRun(request: FinishRunRequest): Promise<StoredEvent[] | undefined> {
    return this.#write(() => {
      const s = this.#s
      const { threadId, runId, now } = request
      const outcomeJson = request.outcome === undefined ? null : JSON.stringify(request.outcome)
      if (s.finishRun.run({ ...request, outcomeJson, errorCode: request.errorCode ?? null }).changes === 0)
        return undefined
      for (const call of request.closeCalls ?? []) {
        const closed = s.closeToolCall.run({ ...call, threadId, now, fromJson: JSON.stringify(call.from) }).changes
        if (closed === 1) appendMessagesTx(s, threadId, runId, [call.message], now)
      }
      // No revision bump of its own: the release below is this transaction's one (docs/architecture.md).
      if (request.state !== undefined) s.replaceState.run({ threadId, stateJson: JSON.stringify(request.state) })
      const stored = appendEventsTx(s, threadId, runId, request.events)
      if (request.closeBatch) s.closeBatch.run({ ...request.closeBatch, now })
      const status = s.getOpenBatch.get(threadId) ? 'interrupted' : 'idle'
      s.releaseThread.run({ threadId, runId, status, now })
      insertOutboxTx(s, request.outbox, now)
      return stored
    })
  }

  async requestCancel(threadId: string, runId: string, now: number): Promise<RunRecord | undefined> {
    return this.#write(() => {
      this.#s.requestCancel.run({ threadId, runId, now })
      const row = this.#s.getRun.get(threadId, runId)
      return row ? toRun(row) : undefined
    })
  }

  async heartbeatRuns(executorId: string, leaseUntil: number): Promise<RunHeartbeat[]> {
    return this.#write(() => this.#s.heartbeatRuns.all({ leaseUntil, executorId }).map(toRunHeartbeat))
  }

  async listAbandonedRuns(query: AbandonedRunsQuery): Promise<RunKey[]> {
    const rows = this.#s.listAbandoned.all({
      now: query.now,
      all: query.all ? 1 : 0,
      exclude: query.excludeExecutor ?? null,
    })
    return rows.map(toRunKey)
  }

  async takeOverRun(request: TakeOverRequest): Promise<RunRecord | undefined> {
    return this.#write(() => {
      if (this.#s.takeOverRun.run({ ...request, force: request.force ? 1 : 0 }).changes === 0) return undefined
      return toRun(this.#s.getRun.get(request.threadId, request.runId)!)
    })
  }

  async listDecisions(threadId: string): Promise<DecisionRecord[]> {
    return mergeDecisions(listDecisions(this.#s, threadId), this.#rules.decisions(threadId))
  }

  async getDecision(threadId: string, runId: string): Promise<DecisionRecord | undefined> {
    return getDecision(this.#s, threadId, runId)
  }

  async listPendingBatches(query: PendingBatchQuery): Promise<PendingBatchRecord[]> {
    return listPendingBatches(this.#s, query)
  }

  async listDueBatches(query: DueBatchQuery): Promise<BatchRecord[]> {
    return listDueBatches(this.#s, query)
  }

  async claimOutbox(request: ClaimOutboxRequest): Promise<OutboxDelivery[]> {
    return this.#write(() => claimOutboxTx(this.#s, request))
  }

  async settleOutbox(settlement: OutboxSettlement): Promise<boolean> {
    return this.#write(() => settleOutboxTx(this.#s, settlement))
  }

  async listOutbox(filter: OutboxFilter = {}): Promise<OutboxDelivery[]> {
    return listOutbox(this.#s, filter)
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

  async getToolCheckpoint(threadId: string, toolCallId: string): Promise<string | undefined> {
    return this.#checkpoints.get(threadId, toolCallId)
  }

  async saveToolCheckpoint(request: SaveToolCheckpoint): Promise<void> {
    this.#write(() => {
      fenceTx(this.#s, request.threadId, request.runId)
      this.#checkpoints.put(request)
    })
  }

  #messages(threadId: string): Message[] {
    return this.#s.listMessages.all(threadId).map((r) => JSON.parse(r.json) as Message)
  }

  #toBatch(row: BatchRow): BatchRecord {
    return toBatch(row, this.#s.listInterrupts.all(row.batch_id))
  }

  /** Runs `fn` in a `BEGIN IMMEDIATE` transaction; a thrown `RollbackWith` rolls back and answers its value. */
  #write<T>(fn: () => T): T {
    try {
      return this.#db.transaction(fn).immediate()
    } catch (error) {
      const refused = rolledBack<T>(error)
      if (refused) return refused.value
      throw error
    }
  }
}

/** Opens (creating on first start) the SQLite store at `file`. */
export function createSqliteStore(file: string, options: SqliteStoreOptions = {}): Store {
  return new SqliteStore(file, options)
}
