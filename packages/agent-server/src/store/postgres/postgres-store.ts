import type pg from 'pg'
import type { PoolClient, PoolConfig } from 'pg'
import type { DecisionRecord, Message, PermissionRule } from '@interlude/protocol'
import type { PermissionRuleFilter, PermissionRuleMatch } from '../permission-rules.ts'
import { mergeDecisions } from '../permission-rules.ts'
import type { Clock } from '../../clock.ts'
import { systemClock } from '../../clock.ts'
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
import { addRunUsage, sumUsage } from './usage.ts'
import { admissionView } from './admission-statements.ts'
import { startInputRunTx } from './admission.ts'
import { ClaimGroups, DEFAULT_CLAIM_CONCURRENCY } from './claim-groups.ts'
import { appendEventsTx, appendMessagesTx } from './appends.ts'
import { getDecision, listDecisions, listDueBatches, listPendingBatches } from './approval-reads.ts'
import { PgChangeFeed } from './change-feed.ts'
import { PgNotifier } from './notifier.ts'
import { bigintAsNumber, channelFor, withDefaultUser } from './connection.ts'
import { migratePostgres } from './migrations.ts'
import { claimOutbox, insertOutboxTx, listOutbox, settleOutbox } from './outbox.ts'
import {
  addPermissionRule,
  addRuleDecision,
  listPermissionRules,
  listRuleDecisions,
  matchPermissionRules,
  revokePermissionRule,
} from './permission-rules.ts'
import { fenced, rows } from './query.ts'
import * as sql from './statements.ts'
import { loadPg, pgModule } from './pg-module.ts'
import { DEFAULT_SCHEMA } from './options.ts'
import { probeValue, READINESS_PROBE_KEY } from '../store-errors.ts'
import type { PostgresPool, PostgresStoreOptions } from './options.ts'
import { getToolCheckpoint, saveToolCheckpointTx } from './tool-checkpoints.ts'
import type { SaveToolCheckpoint } from '../tool-checkpoints.ts'

// The option types live beside the store; importers keep naming them from here.
export { DEFAULT_SCHEMA } from './options.ts'
export type { PostgresPool, PostgresPoolSettings, PostgresStoreOptions } from './options.ts'

/**
 * The PostgreSQL store (`pg` Pool), for several server replicas on one database. Same semantics as
 * the SQLite store, pinned by the shared conformance suite. Races are decided by single conditional
 * statements or short transactions that lock the thread row first (one lock order everywhere:
 * thread row, then the rows of that thread). `appendEvents` is one statement; once it committed, the new log head
 * is NOTIFYed on the schema's channel (`notifier.ts`, coalesced); `watch()` LISTENs on it (a change feed for live
 * tails and cancels). The SQL is in `statements.ts`; why a write was refused is decided in `../refusals.ts`, shared
 * with SQLite.
 */
export class PostgresStore implements Store {
  readonly kind = 'postgres'
  readonly schema: string
  readonly channel: string
  readonly #pool: pg.Pool
  /** Admission only: latency-critical, never behind run traffic. */
  readonly #admission: pg.Pool
  /** Claims that arrive together are committed together (`claim-groups.ts`). */
  readonly #claims: ClaimGroups
  readonly #config: PoolConfig
  readonly #now: Clock
  /** NOTIFY of appended events, after their commit and coalesced (`notifier.ts`). */
  readonly #notifier: PgNotifier
  #feed: PgChangeFeed | undefined
  #closed = false

  private constructor(options: PostgresStoreOptions) {
    const schema = options.schema ?? DEFAULT_SCHEMA
    this.schema = schema
    this.channel = channelFor(schema)
    this.#now = options.now ?? systemClock
    this.#config = {
      ...(options.pool as PoolConfig | undefined),
      connectionString: withDefaultUser(options.connectionString),
      max: options.max ?? 20,
      types: bigintAsNumber,
      options: `-c search_path=${schema.replace(/[^\w$]/g, '')}`,
    }
    if (!/^[A-Za-z_][\w$]{0,62}$/.test(schema)) {
      throw new RangeError('The PostgreSQL schema name must be a plain identifier (letters, digits, _ and $).')
    }
    const { Pool } = pgModule()
    this.#pool = new Pool(this.#config)
    // Kept warm: a burst of admissions must not pay for new connections (a backend fork each). Generic plans: its
    // statements are key lookups whose plan never depends on the values, and PostgreSQL's custom plans (its default
    // for the first five runs of a prepared statement on each connection) cost 1–4 ms of planning per claim group
    // (bench/README.md, "Admission turns").
    this.#admission = new Pool({
      ...this.#config,
      max: options.admissionMax ?? 10,
      idleTimeoutMillis: 0,
      options: `${this.#config.options} -c plan_cache_mode=force_generic_plan`,
    })
    this.#notifier = new PgNotifier(this.#pool, this.channel)
    // An idle client that loses its connection must not crash the process; the next query reconnects.
    this.#pool.on('error', () => undefined)
    this.#admission.on('error', () => undefined)
    this.#claims = new ClaimGroups(this.#admission, options.claimConcurrency ?? DEFAULT_CLAIM_CONCURRENCY)
  }

  /** Connects, creates the schema on first start and applies migrations. */
  static async open(options: PostgresStoreOptions): Promise<PostgresStore> {
    await loadPg()
    const store = new PostgresStore(options)
    try {
      const client = await store.#pool.connect()
      try {
        await migratePostgres(client, store.schema, store.#now)
      } finally {
        client.release()
      }
      await store.#warmAdmission(options.admissionMax ?? 10)
      return store
    } catch (error) {
      await store.close()
      throw error
    }
  }

  /** The pool, for tests and tooling. */
  get pool(): PostgresPool {
    return this.#pool as unknown as PostgresPool
  }

  async ping(): Promise<void> {
    await this.#pool.query(sql.ping())
  }

  async probeWrite(): Promise<void> {
    await this.#pool.query(sql.upsertSetting(READINESS_PROBE_KEY, probeValue()))
  }

  async close(): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    this.#notifier.close()
    await this.#feed?.close()
    await Promise.all([this.#pool.end(), this.#admission.end()])
  }

  watch(listener: (change: StoreChange) => void): () => void {
    this.#feed ??= new PgChangeFeed(this.#config, this.channel)
    return this.#feed.subscribe(listener)
  }

  async getOrCreateSetting(key: string, create: () => string): Promise<string> {
    const existing = await rows(this.#pool, sql.getSetting(key))
    if (existing[0]) return existing[0].value
    await this.#pool.query(sql.insertSetting(key, create()))
    return (await rows(this.#pool, sql.getSetting(key)))[0]!.value
  }

  async countRunningRuns(ownerId: string): Promise<number> {
    return (await rows(this.#pool, sql.countRunning(ownerId)))[0]?.n ?? 0
  }

  async getThread(threadId: string): Promise<ThreadRecord | undefined> {
    const row = (await rows(this.#pool, sql.getThread(threadId)))[0]
    return row ? toThread(row) : undefined
  }

  async getAdmissionView(
    threadId: string,
    runId: string,
    options: AdmissionViewOptions,
  ): Promise<AdmissionView | undefined> {
    const row = (await rows(this.#admission, admissionView(threadId, runId, options)))[0]!
    if (!row.thread) return undefined
    return {
      thread: toThread(row.thread),
      run: row.run ? toRun(row.run) : undefined,
      openBatch: row.batch ? toBatch(row.batch, row.batch.interrupts) : undefined,
      knownMessageIds: new Set(row.known_messages ?? []),
      knownToolCallIds: new Set(row.known_calls ?? []),
      awaitingResults: (row.awaiting ?? []).map(toToolCall),
    }
  }

  async listThreads(ownerId: string, query: ThreadQuery): Promise<ThreadRecord[]> {
    return (await rows(this.#pool, sql.listThreads(ownerId, query))).map(toThread)
  }

  async listMessages(threadId: string): Promise<Message[]> {
    return (await rows(this.#pool, sql.listMessages(threadId))).map((r) => JSON.parse(r.json) as Message)
  }

  async listMessagePage(threadId: string, query: MessagePageQuery): Promise<StoredMessage[]> {
    return (await rows(this.#pool, sql.messagePage(threadId, query))).map(toStoredMessage)
  }

  async getFirstUserMessage(threadId: string): Promise<StoredMessage | undefined> {
    const row = (await rows(this.#pool, sql.firstUserMessage(threadId)))[0]
    return row ? toStoredMessage(row) : undefined
  }

  async listToolCallIds(threadId: string): Promise<string[]> {
    return (await rows(this.#pool, sql.listToolCallIds(threadId))).map((r) => r.tool_call_id)
  }

  async addRunUsage(
    threadId: string,
    runId: string,
    usage: { inputTokens: number; outputTokens: number },
  ): Promise<void> {
    await addRunUsage(this.#pool, threadId, runId, usage)
  }

  async sumUsage(scope: UsageScope): Promise<UsageCounts> {
    return sumUsage(this.#pool, scope)
  }

  async getRun(threadId: string, runId: string): Promise<RunRecord | undefined> {
    const row = (await rows(this.#pool, sql.getRun(threadId, runId)))[0]
    return row ? toRun(row) : undefined
  }

  async getOpenBatch(threadId: string): Promise<BatchRecord | undefined> {
    const row = (await rows(this.#pool, sql.getOpenBatch(threadId)))[0]
    return row ? toBatch(row, row.interrupts) : undefined
  }

  async getBatchOfInterrupt(threadId: string, interruptId: string): Promise<BatchRecord | undefined> {
    const row = (await rows(this.#admission, sql.getBatchOfInterrupt(threadId, interruptId)))[0]
    return row ? toBatch(row, row.interrupts) : undefined
  }

  async listToolCalls(
    threadId: string,
    filter: { readonly status?: readonly ToolCallStatus[] } = {},
  ): Promise<ToolCallRecord[]> {
    return (await rows(this.#pool, sql.listToolCalls(threadId, filter.status))).map(toToolCall)
  }

  async getToolCall(threadId: string, toolCallId: string): Promise<ToolCallRecord | undefined> {
    const row = (await rows(this.#pool, sql.getToolCall(threadId, toolCallId)))[0]
    return row ? toToolCall(row) : undefined
  }

  async startInputRun(request: StartInputRunRequest): Promise<StartRunResult> {
    return this.#tx((q) => startInputRunTx(q, request), this.#admission)
  }

  async claimBatch(request: ClaimBatchRequest): Promise<ClaimBatchResult> {
    return this.#claims.claim(request)
  }

  async appendEvents(threadId: string, runId: string, events: readonly NewEvent[]): Promise<StoredEvent[]> {
    if (events.length === 0) return []
    const stored = await appendEventsTx(this.#pool, threadId, runId, events)
    this.#notifier.announce(threadId, stored[stored.length - 1]!.seq)
    return stored
  }

  async readEvents(threadId: string, query: EventQuery): Promise<StoredEvent[]> {
    return (await rows(this.#pool, sql.readEvents(threadId, query))).map(toStoredEvent)
  }

  async pollThreads(threadIds: readonly string[]): Promise<ThreadHead[]> {
    if (threadIds.length === 0) return []
    return (await rows(this.#pool, sql.pollThreads(threadIds))).map(toThreadHead)
  }

  async appendMessages(threadId: string, runId: string, messages: readonly Message[]): Promise<void> {
    if (messages.length === 0) return
    await this.#tx(async (q) => {
      const now = this.#now()
      await fenced(q, sql.bumpIfActive(threadId, runId, now), threadId, runId)
      await appendMessagesTx(q, threadId, runId, messages, now)
    })
  }

  async setState(threadId: string, state: unknown): Promise<void> {
    await this.#pool.query(sql.setState(threadId, JSON.stringify(state ?? null), this.#now()))
  }

  async insertToolCalls(records: readonly NewToolCall[]): Promise<void> {
    if (records.length === 0) return
    await this.#tx(async (q) => {
      const locked = new Set<string>()
      for (const r of records) {
        const key = `${r.threadId}\u0000${r.runId}`
        if (!locked.has(key)) {
          await fenced(q, sql.lockIfActive(r.threadId, r.runId), r.threadId, r.runId)
          locked.add(key)
        }
        await q.query(sql.insertToolCall(r))
      }
    })
  }

  async beginEffect(threadId: string, toolCallId: string, runId: string, now: number): Promise<BeginEffectResult> {
    if ((await this.#pool.query(sql.beginEffect(threadId, toolCallId, runId, now))).rowCount === 1) return 'started'
    const facts = (await rows(this.#pool, sql.effectFacts(threadId, runId)))[0]!
    return effectRefusal({ active: facts.active, cancelRequested: facts.cancel })
  }

  async settleToolCall(request: SettleToolCallRequest): Promise<void> {
    await this.#tx(async (q) => {
      const { threadId, runId, now } = request
      const state = 'state' in request ? { json: JSON.stringify(request.state ?? null) } : undefined
      await fenced(q, sql.bumpIfActive(threadId, runId, now, state), threadId, runId)
      const settled = { status: request.status, result: request.result ?? null, now }
      await q.query(sql.settleToolCall(threadId, request.toolCallId, settled))
      if (request.message) await appendMessagesTx(q, threadId, runId, [request.message], now)
    })
  }

  async reconcileEffect(request: ReconcileEffectRequest): Promise<boolean> {
    const { threadId, toolCallId, status, result, now } = request
    const closed = await this.#pool.query(
      sql.closeToolCall(threadId, { toolCallId, status, result, from: ['unknown'] }, now),
    )
    return closed.rowCount === 1
  }

  async createBatch(batch: NewBatch): Promise<void> {
    await this.#tx(async (q) => {
      await fenced(q, sql.interruptIfActive(batch.threadId, batch.runId, batch.createdAt), batch.threadId, batch.runId)
      await q.query(sql.insertBatch(batch))
      await q.query(sql.insertInterrupts(batch))
      await insertOutboxTx(q, batch.outbox, batch.createdAt)
    })
  }

  async finishRun(request: FinishRunRequest): Promise<StoredEvent[] | undefined> {
    const stored = await this.#tx(async (q) => {
      const { threadId, runId, now } = request
      // Thread row first (the lock order of every write), then the run.
      await q.query(sql.lockThread(threadId))
      if ((await q.query(sql.finishRun(request))).rowCount === 0) return undefined
      for (const call of request.closeCalls ?? []) {
        const closed = await q.query(sql.closeToolCall(threadId, call, now))
        if (closed.rowCount === 1) await appendMessagesTx(q, threadId, runId, [call.message], now)
      }
      // No revision bump of its own: the release below is this transaction's one (docs/architecture.md).
      if (request.state !== undefined) await q.query(sql.replaceState(threadId, JSON.stringify(request.state)))
      const stored = await appendEventsTx(q, threadId, runId, request.events)
      if (request.closeBatch) await q.query(sql.closeBatch(request.closeBatch.batchId, request.closeBatch.status, now))
      await q.query(sql.releaseThread(threadId, runId, now))
      await insertOutboxTx(q, request.outbox, now)
      return stored
    })
    const last = stored?.[stored.length - 1]
    if (last) this.#notifier.announce(request.threadId, last.seq)
    return stored
  }

  async requestCancel(threadId: string, runId: string, now: number): Promise<RunRecord | undefined> {
    const flagged = (await rows(this.#pool, sql.requestCancel(threadId, runId, now, this.channel)))[0]
    if (flagged) return toRun(flagged)
    return this.getRun(threadId, runId)
  }

  async heartbeatRuns(executorId: string, leaseUntil: number): Promise<RunHeartbeat[]> {
    return (await rows(this.#pool, sql.heartbeatRuns(executorId, leaseUntil))).map(toRunHeartbeat)
  }

  async listAbandonedRuns(query: AbandonedRunsQuery): Promise<RunKey[]> {
    return (await rows(this.#pool, sql.listAbandoned(query))).map(toRunKey)
  }

  async takeOverRun(request: TakeOverRequest): Promise<RunRecord | undefined> {
    const row = (await rows(this.#pool, sql.takeOverRun(request)))[0]
    return row ? toRun(row) : undefined
  }

  async listDecisions(threadId: string): Promise<DecisionRecord[]> {
    const [batches, rules] = await Promise.all([
      listDecisions(this.#pool, threadId),
      listRuleDecisions(this.#pool, threadId),
    ])
    return mergeDecisions(batches, rules)
  }

  async getDecision(threadId: string, runId: string): Promise<DecisionRecord | undefined> {
    return getDecision(this.#pool, threadId, runId)
  }

  async listPendingBatches(query: PendingBatchQuery): Promise<PendingBatchRecord[]> {
    return listPendingBatches(this.#pool, query)
  }

  async listDueBatches(query: DueBatchQuery): Promise<BatchRecord[]> {
    return listDueBatches(this.#pool, query)
  }

  async claimOutbox(request: ClaimOutboxRequest): Promise<OutboxDelivery[]> {
    return claimOutbox(this.#pool, request)
  }

  async settleOutbox(settlement: OutboxSettlement): Promise<boolean> {
    return settleOutbox(this.#pool, settlement)
  }

  async listOutbox(filter: OutboxFilter = {}): Promise<OutboxDelivery[]> {
    return listOutbox(this.#pool, filter)
  }

  async addPermissionRule(rule: PermissionRule): Promise<void> {
    await addPermissionRule(this.#pool, rule)
  }

  async listPermissionRules(owner: string, filter?: PermissionRuleFilter): Promise<PermissionRule[]> {
    return listPermissionRules(this.#pool, owner, filter)
  }

  async matchPermissionRules(query: PermissionRuleMatch): Promise<PermissionRule[]> {
    return matchPermissionRules(this.#pool, query)
  }

  async revokePermissionRule(owner: string, ruleId: string, at: number): Promise<boolean> {
    return revokePermissionRule(this.#pool, owner, ruleId, at)
  }

  async addRuleDecision(record: DecisionRecord): Promise<void> {
    await addRuleDecision(this.#pool, record)
  }

  async getToolCheckpoint(threadId: string, toolCallId: string): Promise<string | undefined> {
    return getToolCheckpoint(this.#pool, threadId, toolCallId)
  }

  async saveToolCheckpoint(request: SaveToolCheckpoint): Promise<void> {
    await this.#tx((q) => saveToolCheckpointTx(q, request))
  }

  /** Opens the admission pool's connections up front. */
  async #warmAdmission(count: number): Promise<void> {
    const clients = await Promise.all(Array.from({ length: count }, () => this.#admission.connect()))
    for (const client of clients) client.release()
  }

  /**
   * A short transaction on one pooled connection. A thrown `RollbackWith` rolls back and answers its
   * value. Deadlocks and serialization failures (never expected with the single lock order, but
   * cheap to survive) are retried.
   */
  async #tx<T>(fn: (q: PoolClient) => Promise<T>, pool: pg.Pool = this.#pool): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      const client = await pool.connect()
      try {
        await client.query('BEGIN')
        const value = await fn(client)
        await client.query('COMMIT')
        return value
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined)
        const refused = rolledBack<T>(error)
        if (refused) return refused.value
        const code = (error as { code?: string }).code
        if ((code === '40P01' || code === '40001') && attempt < 3) continue
        throw error
      } finally {
        client.release()
      }
    }
  }
}

/** Opens (creating schema and tables on first start) the PostgreSQL store. */
export function createPostgresStore(options: PostgresStoreOptions): Promise<Store> {
  return PostgresStore.open(options)
}
