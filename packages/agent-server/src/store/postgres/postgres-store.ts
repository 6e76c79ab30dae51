import { createHash } from 'node:crypto'
import os from 'node:os'
import pg from 'pg'
import type { PoolClient, PoolConfig, QueryResultRow } from 'pg'
import type { Message } from '@interlude/protocol'
import type { BatchRow, EventRow, InterruptRow, RunRow, ThreadRow, ToolCallRow } from '../rows.ts'
import { toBatch, toRun, toThread, toToolCall } from '../rows.ts'
import { RunNotActiveError } from '../store.ts'
import type {
  AdmissionView,
  BatchRecord,
  BeginEffectResult,
  ClaimBatchRequest,
  ClaimBatchResult,
  EventQuery,
  FinishRunRequest,
  NewBatch,
  NewEvent,
  NewToolCall,
  RunHeartbeat,
  RunKey,
  RunRecord,
  SettleToolCallRequest,
  StartInputRunRequest,
  StartRunResult,
  Store,
  StoreChange,
  StoredEvent,
  TakeOverRequest,
  ThreadHead,
  ThreadQuery,
  ThreadRecord,
  ToolCallRecord,
  ToolCallStatus,
} from '../store.ts'
import { PgChangeFeed } from './change-feed.ts'
import { migratePostgres } from './migrations.ts'

export interface PostgresStoreOptions {
  /** `postgres://user:password@host:port/database`; a URL without a user connects as the OS user. */
  readonly connectionString: string
  /** Tables live in this schema (created on first start); default: the connection's search_path. */
  readonly schema?: string
  /** Size of the pool for run work (events, tool calls, messages, reads). @default 20 */
  readonly max?: number
  /**
   * Size of a separate pool for admission (`getAdmissionView`, `claimBatch`, `startInputRun`,
   * `getBatchOfInterrupt`), so admissions never queue behind the writes of running runs. @default 10
   */
  readonly admissionMax?: number
  /** Extra pg pool settings (ssl, timeouts…). */
  readonly pool?: Omit<PoolConfig, 'connectionString' | 'max' | 'options'>
}

type Queryable = Pick<PoolClient, 'query'>

/** BIGINT (epoch ms, counters) as JS numbers: every value stored here is < 2^53. */
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === 20 && format !== 'binary'
      ? (value: string) => Number(value)
      : pg.types.getTypeParser(oid, format as 'text')) as never,
}

/** Statuses from which an effect may start (anything else already started or settled). */
const STARTABLE: readonly ToolCallStatus[] = ['pending', 'awaiting_decision']

const BATCH_WITH_INTERRUPTS = `
  SELECT b.*, COALESCE((
    SELECT json_agg(json_build_object('kind', i.kind, 'tool_call_id', i.tool_call_id, 'tool_name', i.tool_name, 'json', i.json) ORDER BY i.position)
    FROM interrupts i WHERE i.batch_id = b.batch_id), '[]'::json) AS interrupts
  FROM interrupt_batches b`

type BatchWithInterrupts = BatchRow & { interrupts: InterruptRow[] }

class RollbackWith {
  constructor(readonly value: unknown) {}
}

/** Connection string with the OS user filled in when the URL names none (pg would refuse it). */
export function withDefaultUser(connectionString: string): string {
  let url: URL
  try {
    url = new URL(connectionString)
  } catch {
    return connectionString
  }
  if (url.username === '') {
    url.username = encodeURIComponent(process.env.PGUSER ?? process.env.USER ?? os.userInfo().username)
  }
  return url.toString()
}

/** The NOTIFY channel of a schema (one channel per database schema, ≤ 63 bytes). */
export function channelFor(schema: string | undefined): string {
  const name = schema ?? 'public'
  return /^[a-z0-9_]{1,48}$/.test(name)
    ? `interlude_${name}`
    : `interlude_${createHash('sha1').update(name).digest('hex').slice(0, 24)}`
}

/**
 * The PostgreSQL store (`pg` Pool), for several server replicas on one database. Same semantics as
 * the SQLite store, pinned by the shared conformance suite. Races are decided by single conditional
 * statements or short transactions that lock the thread row first (one lock order everywhere:
 * thread row, then the rows of that thread). `appendEvents` is one statement that also NOTIFYs
 * the schema's channel; `watch()` LISTENs on it (a change feed for live tails and cancels).
 */
export class PostgresStore implements Store {
  readonly kind = 'postgres'
  readonly schema: string | undefined
  readonly channel: string
  readonly #pool: pg.Pool
  /** Admission only: latency-critical, never behind run traffic. */
  readonly #admission: pg.Pool
  readonly #config: PoolConfig
  #feed: PgChangeFeed | undefined
  #closed = false

  private constructor(options: PostgresStoreOptions) {
    this.schema = options.schema
    this.channel = channelFor(options.schema)
    this.#config = {
      ...options.pool,
      connectionString: withDefaultUser(options.connectionString),
      max: options.max ?? 20,
      types,
      ...(options.schema !== undefined ? { options: `-c search_path=${options.schema.replace(/[^\w$]/g, '')}` } : {}),
    }
    if (options.schema !== undefined && !/^[A-Za-z_][\w$]{0,62}$/.test(options.schema)) {
      throw new RangeError('The PostgreSQL schema name must be a plain identifier (letters, digits, _ and $).')
    }
    this.#pool = new pg.Pool(this.#config)
    // Kept warm: a burst of admissions must not pay for new connections (a backend fork each).
    this.#admission = new pg.Pool({ ...this.#config, max: options.admissionMax ?? 10, idleTimeoutMillis: 0 })
    // An idle client that loses its connection must not crash the process; the next query reconnects.
    this.#pool.on('error', () => undefined)
    this.#admission.on('error', () => undefined)
  }

  /** Connects, creates the schema on first start and applies migrations. */
  static async open(options: PostgresStoreOptions): Promise<PostgresStore> {
    const store = new PostgresStore(options)
    try {
      const client = await store.#pool.connect()
      try {
        await migratePostgres(client, options.schema)
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
  get pool(): pg.Pool {
    return this.#pool
  }

  async ping(): Promise<void> {
    await this.#pool.query('SELECT 1')
  }

  async close(): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    await this.#feed?.close()
    await Promise.all([this.#pool.end(), this.#admission.end()])
  }

  watch(listener: (change: StoreChange) => void): () => void {
    this.#feed ??= new PgChangeFeed(this.#config, this.channel)
    return this.#feed.subscribe(listener)
  }

  async getOrCreateSetting(key: string, create: () => string): Promise<string> {
    const existing = await this.#rows<{ value: string }>('SELECT value FROM settings WHERE key = $1', [key])
    if (existing[0]) return existing[0].value
    await this.#pool.query('INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING', [
      key,
      create(),
    ])
    return (await this.#rows<{ value: string }>('SELECT value FROM settings WHERE key = $1', [key]))[0]!.value
  }

  async getThread(threadId: string): Promise<ThreadRecord | undefined> {
    const row = (await this.#rows<ThreadRow>('SELECT * FROM threads WHERE thread_id = $1', [threadId]))[0]
    return row ? toThread(row) : undefined
  }

  async getAdmissionView(
    threadId: string,
    runId: string,
    options: { readonly history: boolean },
  ): Promise<AdmissionView | undefined> {
    // One statement is one snapshot (and one round trip).
    const rows = await this.#rows<{
      thread: ThreadRow | null
      run: RunRow | null
      batch: BatchWithInterrupts | null
      messages: string[] | null
      awaiting: ToolCallRow[] | null
    }>(
      `SELECT
         (SELECT row_to_json(t) FROM threads t WHERE t.thread_id = $1) AS thread,
         (SELECT row_to_json(r) FROM runs r WHERE r.thread_id = $1 AND r.run_id = $2) AS run,
         (SELECT row_to_json(x) FROM (${BATCH_WITH_INTERRUPTS} WHERE b.thread_id = $1 AND b.status = 'pending') x) AS batch,
         CASE WHEN $3 THEN (SELECT json_agg(m.json ORDER BY m.position) FROM messages m WHERE m.thread_id = $1) END AS messages,
         CASE WHEN $3 THEN (SELECT json_agg(row_to_json(c) ORDER BY c.created_at, c.ordinal) FROM tool_calls c
                            WHERE c.thread_id = $1 AND c.status = 'awaiting_result') END AS awaiting`,
      [threadId, runId, options.history],
      this.#admission,
    )
    const row = rows[0]!
    if (!row.thread) return undefined
    return {
      thread: toThread(row.thread),
      run: row.run ? toRun(row.run) : undefined,
      openBatch: row.batch ? toBatch(row.batch, row.batch.interrupts) : undefined,
      messages: (row.messages ?? []).map((json) => JSON.parse(json) as Message),
      awaitingResults: (row.awaiting ?? []).map(toToolCall),
    }
  }

  async listThreads(ownerId: string, query: ThreadQuery): Promise<ThreadRecord[]> {
    const after = query.after
    const rows = await this.#rows<ThreadRow>(
      `SELECT * FROM threads
       WHERE owner_id = $1 AND ($2::text IS NULL OR status = $2)
         AND ($3::bigint IS NULL OR updated_at < $3 OR (updated_at = $3 AND thread_id > $4))
         AND ($5::bigint IS NULL OR EXISTS (
           SELECT 1 FROM interrupt_batches b
           WHERE b.thread_id = threads.thread_id AND b.status = 'pending' AND b.expires_at > $5))
       ORDER BY updated_at DESC, thread_id ASC
       LIMIT $6`,
      [
        ownerId,
        query.status ?? null,
        after ? after.updatedAt : null,
        after ? after.threadId : null,
        query.pendingInterruptsAt ?? null,
        query.limit,
      ],
    )
    return rows.map(toThread)
  }

  async listMessages(threadId: string): Promise<Message[]> {
    const rows = await this.#rows<{ json: string }>(
      'SELECT json FROM messages WHERE thread_id = $1 ORDER BY position',
      [threadId],
    )
    return rows.map((r) => JSON.parse(r.json) as Message)
  }

  async getRun(threadId: string, runId: string): Promise<RunRecord | undefined> {
    const row = (
      await this.#rows<RunRow>('SELECT * FROM runs WHERE thread_id = $1 AND run_id = $2', [threadId, runId])
    )[0]
    return row ? toRun(row) : undefined
  }

  async getOpenBatch(threadId: string): Promise<BatchRecord | undefined> {
    const row = (
      await this.#rows<BatchWithInterrupts>(
        `${BATCH_WITH_INTERRUPTS} WHERE b.thread_id = $1 AND b.status = 'pending'`,
        [threadId],
      )
    )[0]
    return row ? toBatch(row, row.interrupts) : undefined
  }

  async getBatchOfInterrupt(threadId: string, interruptId: string): Promise<BatchRecord | undefined> {
    const row = (
      await this.#rows<BatchWithInterrupts>(
        `${BATCH_WITH_INTERRUPTS} WHERE b.batch_id = (SELECT batch_id FROM interrupts WHERE interrupt_id = $1 AND thread_id = $2)`,
        [interruptId, threadId],
        this.#admission,
      )
    )[0]
    return row ? toBatch(row, row.interrupts) : undefined
  }

  async listToolCalls(
    threadId: string,
    filter: { readonly status?: readonly ToolCallStatus[] } = {},
  ): Promise<ToolCallRecord[]> {
    const rows = await this.#rows<ToolCallRow>(
      `SELECT * FROM tool_calls WHERE thread_id = $1 AND ($2::text[] IS NULL OR status = ANY($2)) ORDER BY created_at, ordinal`,
      [threadId, filter.status ? [...filter.status] : null],
    )
    return rows.map(toToolCall)
  }

  async getToolCall(threadId: string, toolCallId: string): Promise<ToolCallRecord | undefined> {
    const row = (
      await this.#rows<ToolCallRow>('SELECT * FROM tool_calls WHERE thread_id = $1 AND tool_call_id = $2', [
        threadId,
        toolCallId,
      ])
    )[0]
    return row ? toToolCall(row) : undefined
  }

  async startInputRun(request: StartInputRunRequest): Promise<StartRunResult> {
    return this.#tx(async (q): Promise<StartRunResult> => {
      const { threadId, runId, now } = request
      if (request.expectedRevision === null) {
        const inserted = await q.query(
          `INSERT INTO threads (thread_id, owner_id, revision, status, state_json, active_run_id, last_seq, created_at, updated_at)
           VALUES ($1, $2, 1, 'running', $3, $4, 0, $5, $5) ON CONFLICT (thread_id) DO NOTHING`,
          [threadId, request.ownerId, JSON.stringify(request.initialState ?? null), runId, now],
        )
        if (inserted.rowCount === 0) return { ok: false, reason: 'thread_exists' }
      } else {
        // The conditional update is the admission decision: same revision, no active run, no open batch.
        const claimed = await q.query(
          `UPDATE threads SET active_run_id = $1, status = 'running', revision = revision + 1, updated_at = $2
           WHERE thread_id = $3 AND revision = $4 AND active_run_id IS NULL AND status = 'idle'`,
          [runId, now, threadId, request.expectedRevision],
        )
        if (claimed.rowCount === 0) {
          const row = (await q.query<ThreadRow>('SELECT * FROM threads WHERE thread_id = $1', [threadId])).rows[0]
          if (!row || row.revision !== request.expectedRevision) return { ok: false, reason: 'revision_changed' }
          if (row.active_run_id !== null) return { ok: false, reason: 'busy' }
          return { ok: false, reason: 'interrupted' }
        }
      }
      const run = await q.query(
        `INSERT INTO runs (thread_id, run_id, kind, status, parent_run_id, created_at, executor_id, lease_until)
         VALUES ($1, $2, 'input', 'running', $3, $4, $5, $6) ON CONFLICT DO NOTHING`,
        [threadId, runId, request.parentRunId ?? null, now, request.executorId, request.leaseUntil],
      )
      if (run.rowCount === 0) throw new RollbackWith({ ok: false, reason: 'run_exists' })
      await this.#appendMessagesTx(q, threadId, runId, request.messages, now)
      for (const r of request.toolResults) {
        await q.query(
          'UPDATE tool_calls SET status = $1, result = $2, finished_at = $3 WHERE thread_id = $4 AND tool_call_id = $5',
          [r.status, r.result, now, threadId, r.toolCallId],
        )
      }
      const thread = (await q.query<ThreadRow>('SELECT * FROM threads WHERE thread_id = $1', [threadId])).rows[0]!
      return { ok: true, thread: toThread(thread) }
    }, this.#admission)
  }

  async claimBatch(request: ClaimBatchRequest): Promise<ClaimBatchResult> {
    const { threadId, runId, batchId, now } = request
    // One statement, all or nothing. The thread row is the arbiter: concurrent claimers queue on
    // its lock and re-check `active_run_id IS NULL` after the winner commits, so exactly one takes
    // the thread; only that one moves the batch from `pending` to `claimed` and inserts the run.
    // A duplicate run id fails the whole statement (unique violation → run_exists, nothing written).
    let rows: { thread: ThreadRow | null }[]
    try {
      rows = await this.#rows<{ thread: ThreadRow | null }>(
        `WITH thread AS (
           UPDATE threads SET active_run_id = $3, status = 'running', revision = revision + 1, updated_at = $4
           WHERE thread_id = $6 AND active_run_id IS NULL
             AND EXISTS (SELECT 1 FROM interrupt_batches WHERE batch_id = $5 AND thread_id = $6 AND status = 'pending')
           RETURNING *
         ), claimed AS (
           UPDATE interrupt_batches SET status = 'claimed', decision_hash = $1, decision_json = $2, claimed_by_run_id = $3, claimed_at = $4
           WHERE batch_id = $5 AND thread_id = $6 AND status = 'pending' AND EXISTS (SELECT 1 FROM thread)
           RETURNING batch_id
         ), run AS (
           INSERT INTO runs (thread_id, run_id, kind, status, batch_id, decision_hash, created_at, executor_id, lease_until)
           SELECT $6, $3, 'resume', 'running', batch_id, $1, $4, $7, $8 FROM claimed
           RETURNING run_id
         )
         SELECT (SELECT row_to_json(t) FROM thread t WHERE EXISTS (SELECT 1 FROM run)) AS thread`,
        [
          request.decisionHash,
          JSON.stringify(request.decision),
          runId,
          now,
          batchId,
          threadId,
          request.executorId,
          request.leaseUntil,
        ],
        this.#admission,
      )
    } catch (error) {
      if ((error as { code?: string }).code === '23505') return { ok: false, reason: 'run_exists' }
      throw error
    }
    const thread = rows[0]?.thread
    if (thread) return { ok: true, thread: toThread(thread) }
    const row = (
      await this.#rows<BatchRow>('SELECT * FROM interrupt_batches WHERE batch_id = $1', [batchId], this.#admission)
    )[0]
    if (row && row.claimed_by_run_id !== null && row.decision_hash !== null) {
      return {
        ok: false,
        reason: 'already_claimed',
        claimedByRunId: row.claimed_by_run_id,
        decisionHash: row.decision_hash,
      }
    }
    if (row && row.status === 'pending') return { ok: false, reason: 'busy' }
    return { ok: false, reason: 'not_pending' }
  }

  async appendEvents(threadId: string, runId: string, events: readonly NewEvent[]): Promise<StoredEvent[]> {
    if (events.length === 0) return []
    return this.#appendEventsTx(this.#pool, threadId, runId, events)
  }

  async readEvents(threadId: string, query: EventQuery): Promise<StoredEvent[]> {
    const rows = await this.#rows<EventRow>(
      `SELECT seq, run_id, type, json FROM events
       WHERE thread_id = $1 AND seq > $2 AND ($3::text IS NULL OR run_id = $3)
       ORDER BY seq LIMIT $4`,
      [threadId, query.afterSeq ?? 0, query.runId ?? null, query.limit ?? null],
    )
    return rows.map((r) => ({ seq: r.seq, runId: r.run_id, type: r.type, json: r.json }))
  }

  async pollThreads(threadIds: readonly string[]): Promise<ThreadHead[]> {
    if (threadIds.length === 0) return []
    const rows = await this.#rows<{ thread_id: string; last_seq: number; active_run_id: string | null }>(
      'SELECT thread_id, last_seq, active_run_id FROM threads WHERE thread_id = ANY($1::text[])',
      [[...threadIds]],
    )
    return rows.map((r) => ({ threadId: r.thread_id, lastSeq: r.last_seq, activeRunId: r.active_run_id ?? undefined }))
  }

  async appendMessages(threadId: string, runId: string, messages: readonly Message[]): Promise<void> {
    if (messages.length === 0) return
    await this.#tx(async (q) => {
      await this.#fence(q, threadId, runId, true)
      await this.#appendMessagesTx(q, threadId, runId, messages, Date.now())
    })
  }

  async setState(threadId: string, state: unknown): Promise<void> {
    await this.#pool.query(
      'UPDATE threads SET state_json = $1, revision = revision + 1, updated_at = $2 WHERE thread_id = $3',
      [JSON.stringify(state ?? null), Date.now(), threadId],
    )
  }

  async insertToolCalls(records: readonly NewToolCall[]): Promise<void> {
    if (records.length === 0) return
    await this.#tx(async (q) => {
      const fenced = new Set<string>()
      for (const r of records) {
        const key = `${r.threadId}\u0000${r.runId}`
        if (!fenced.has(key)) {
          await this.#fence(q, r.threadId, r.runId, false)
          fenced.add(key)
        }
        await q.query(
          `INSERT INTO tool_calls (thread_id, tool_call_id, run_id, message_id, tool_name, args_text, kind, status, created_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
          [r.threadId, r.toolCallId, r.runId, r.messageId, r.toolName, r.argsText, r.kind, r.status, r.now],
        )
      }
    })
  }

  async beginEffect(threadId: string, toolCallId: string, runId: string, now: number): Promise<BeginEffectResult> {
    // One statement: lock the thread row (waits for a concurrent recovery to commit, then re-checks
    // that the run is still active), refuse after a cancel request, start at most once.
    const started = await this.#pool.query(
      `WITH active AS (SELECT 1 FROM threads WHERE thread_id = $3 AND active_run_id = $1 FOR UPDATE)
       UPDATE tool_calls SET status = 'started', attempt_run_id = $1, started_at = $2
       WHERE thread_id = $3 AND tool_call_id = $4 AND status = ANY($5::text[])
         AND EXISTS (SELECT 1 FROM active)
         AND NOT EXISTS (SELECT 1 FROM runs WHERE thread_id = $3 AND run_id = $1 AND cancel_requested_at IS NOT NULL)`,
      [runId, now, threadId, toolCallId, [...STARTABLE]],
    )
    if (started.rowCount === 1) return 'started'
    const state = (
      await this.#rows<{ active: boolean; cancel: boolean }>(
        `SELECT EXISTS (SELECT 1 FROM threads WHERE thread_id = $1 AND active_run_id = $2) AS active,
                EXISTS (SELECT 1 FROM runs WHERE thread_id = $1 AND run_id = $2 AND cancel_requested_at IS NOT NULL) AS cancel`,
        [threadId, runId],
      )
    )[0]!
    if (!state.active) return 'not_active'
    if (state.cancel) return 'cancel_requested'
    return 'already_started'
  }

  async settleToolCall(request: SettleToolCallRequest): Promise<void> {
    await this.#tx(async (q) => {
      const { threadId, runId, now } = request
      const fenced = await q.query(
        'state' in request
          ? `UPDATE threads SET state_json = $3, revision = revision + 1, updated_at = $4 WHERE thread_id = $1 AND active_run_id = $2`
          : `UPDATE threads SET revision = revision + 1, updated_at = $3 WHERE thread_id = $1 AND active_run_id = $2`,
        'state' in request ? [threadId, runId, JSON.stringify(request.state ?? null), now] : [threadId, runId, now],
      )
      if (fenced.rowCount === 0) throw new RunNotActiveError(threadId, runId)
      await q.query(
        'UPDATE tool_calls SET status = $1, result = $2, finished_at = $3 WHERE thread_id = $4 AND tool_call_id = $5',
        [request.status, request.result ?? null, now, threadId, request.toolCallId],
      )
      if (request.message) await this.#appendMessagesTx(q, threadId, runId, [request.message], now)
    })
  }

  async createBatch(batch: NewBatch): Promise<void> {
    await this.#tx(async (q) => {
      const fenced = await q.query(
        `UPDATE threads SET status = 'interrupted', revision = revision + 1, updated_at = $3 WHERE thread_id = $1 AND active_run_id = $2`,
        [batch.threadId, batch.runId, batch.createdAt],
      )
      if (fenced.rowCount === 0) throw new RunNotActiveError(batch.threadId, batch.runId)
      await q.query(
        `INSERT INTO interrupt_batches (batch_id, thread_id, run_id, status, created_at, expires_at) VALUES ($1, $2, $3, 'pending', $4, $5)`,
        [batch.batchId, batch.threadId, batch.runId, batch.createdAt, batch.expiresAt],
      )
      await q.query(
        `INSERT INTO interrupts (interrupt_id, batch_id, thread_id, position, kind, tool_call_id, tool_name, json)
         SELECT i.id, $1, $2, i.ord - 1, i.kind, i.tool_call_id, i.tool_name, i.json
         FROM unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::text[]) WITH ORDINALITY AS i(id, kind, tool_call_id, tool_name, json, ord)`,
        [
          batch.batchId,
          batch.threadId,
          batch.interrupts.map((i) => i.interrupt.id),
          batch.interrupts.map((i) => i.kind),
          batch.interrupts.map((i) => i.toolCallId),
          batch.interrupts.map((i) => i.toolName),
          batch.interrupts.map((i) => JSON.stringify(i.interrupt)),
        ],
      )
    })
  }

  async finishRun(request: FinishRunRequest): Promise<StoredEvent[] | undefined> {
    return this.#tx(async (q) => {
      const { threadId, runId, now } = request
      // Thread row first (the lock order of every write), then the run.
      await q.query('SELECT 1 FROM threads WHERE thread_id = $1 FOR UPDATE', [threadId])
      const finished = await q.query(
        `UPDATE runs SET status = $1, outcome_json = $2, error_code = $3, finished_at = $4
         WHERE thread_id = $5 AND run_id = $6 AND status = 'running'`,
        [
          request.status,
          request.outcome === undefined ? null : JSON.stringify(request.outcome),
          request.errorCode ?? null,
          now,
          threadId,
          runId,
        ],
      )
      if (finished.rowCount === 0) return undefined
      for (const call of request.closeCalls ?? []) {
        const closed = await q.query(
          'UPDATE tool_calls SET status = $1, result = $2, finished_at = $3 WHERE thread_id = $4 AND tool_call_id = $5 AND status = ANY($6::text[])',
          [call.status, call.result, now, threadId, call.toolCallId, [...call.from]],
        )
        if (closed.rowCount === 1) await this.#appendMessagesTx(q, threadId, runId, [call.message], now)
      }
      if (request.state !== undefined) {
        await q.query('UPDATE threads SET state_json = $1 WHERE thread_id = $2', [
          JSON.stringify(request.state ?? null),
          threadId,
        ])
      }
      const stored = await this.#appendEventsTx(q, threadId, runId, request.events)
      if (request.closeBatch) {
        await q.query(
          `UPDATE interrupt_batches SET status = $1, closed_at = $2 WHERE batch_id = $3 AND status = 'claimed'`,
          [request.closeBatch.status, now, request.closeBatch.batchId],
        )
      }
      await q.query(
        `UPDATE threads SET
           status = CASE WHEN EXISTS (SELECT 1 FROM interrupt_batches WHERE thread_id = $1 AND status = 'pending') THEN 'interrupted' ELSE 'idle' END,
           active_run_id = NULL, revision = revision + 1, updated_at = $2
         WHERE thread_id = $1 AND active_run_id = $3`,
        [threadId, now, runId],
      )
      return stored
    })
  }

  async requestCancel(threadId: string, runId: string, now: number): Promise<RunRecord | undefined> {
    const rows = await this.#rows<RunRow>(
      `WITH flagged AS (
         UPDATE runs SET cancel_requested_at = COALESCE(cancel_requested_at, $3)
         WHERE thread_id = $1 AND run_id = $2 AND status = 'running' RETURNING *
       )
       SELECT f.*, pg_notify($4, json_build_array('c', f.thread_id, f.run_id)::text) AS notified FROM flagged f`,
      [threadId, runId, now, this.channel],
    )
    if (rows[0]) return toRun(rows[0])
    return this.getRun(threadId, runId)
  }

  async heartbeatRuns(executorId: string, leaseUntil: number): Promise<RunHeartbeat[]> {
    const rows = await this.#rows<{ thread_id: string; run_id: string; cancel_requested_at: number | null }>(
      `UPDATE runs SET lease_until = $1 WHERE executor_id = $2 AND status = 'running' RETURNING thread_id, run_id, cancel_requested_at`,
      [leaseUntil, executorId],
    )
    return rows.map((r) => ({
      threadId: r.thread_id,
      runId: r.run_id,
      cancelRequested: r.cancel_requested_at !== null,
    }))
  }

  async listAbandonedRuns(query: {
    readonly now: number
    readonly all?: boolean
    readonly excludeExecutor?: string
  }): Promise<RunKey[]> {
    const rows = await this.#rows<{ thread_id: string; run_id: string }>(
      `SELECT thread_id, run_id FROM runs
       WHERE status = 'running' AND ($2 OR lease_until IS NULL OR lease_until < $1)
         AND ($3::text IS NULL OR executor_id IS NULL OR executor_id <> $3)
       ORDER BY created_at`,
      [query.now, query.all === true, query.excludeExecutor ?? null],
    )
    return rows.map((r) => ({ threadId: r.thread_id, runId: r.run_id }))
  }

  async takeOverRun(request: TakeOverRequest): Promise<RunRecord | undefined> {
    const row = (
      await this.#rows<RunRow>(
        `UPDATE runs SET executor_id = $1, lease_until = $2
         WHERE thread_id = $3 AND run_id = $4 AND status = 'running' AND ($5 OR lease_until IS NULL OR lease_until < $6)
         RETURNING *`,
        [request.executorId, request.leaseUntil, request.threadId, request.runId, request.force, request.now],
      )
    )[0]
    return row ? toRun(row) : undefined
  }

  // ---- internals ----------------------------------------------------------------------------

  /** Opens the admission pool's connections up front. */
  async #warmAdmission(count: number): Promise<void> {
    const clients = await Promise.all(Array.from({ length: count }, () => this.#admission.connect()))
    for (const client of clients) client.release()
  }

  async #rows<T extends QueryResultRow>(sql: string, params: unknown[], pool: pg.Pool = this.#pool): Promise<T[]> {
    return (await pool.query<T>(sql, params)).rows
  }

  /** Locks the thread row if `runId` is its active run; otherwise `RunNotActiveError`. */
  async #fence(q: Queryable, threadId: string, runId: string, bumpRevision: boolean): Promise<void> {
    const result = bumpRevision
      ? await q.query(
          'UPDATE threads SET revision = revision + 1, updated_at = $3 WHERE thread_id = $1 AND active_run_id = $2',
          [threadId, runId, Date.now()],
        )
      : await q.query('SELECT 1 FROM threads WHERE thread_id = $1 AND active_run_id = $2 FOR UPDATE', [threadId, runId])
    if (result.rowCount === 0) throw new RunNotActiveError(threadId, runId)
  }

  /**
   * One statement: advance the thread's `last_seq` (only while `runId` is its active run — the
   * fence), insert the events with their seq, NOTIFY the channel (delivered at commit).
   */
  async #appendEventsTx(
    q: Queryable,
    threadId: string,
    runId: string,
    events: readonly NewEvent[],
  ): Promise<StoredEvent[]> {
    if (events.length === 0) return []
    const result = await q.query<{ last: number | null }>(
      `WITH head AS (
         UPDATE threads SET last_seq = last_seq + $3 WHERE thread_id = $1 AND active_run_id = $2 RETURNING last_seq
       ), inserted AS (
         INSERT INTO events (thread_id, seq, run_id, type, json)
         SELECT $1, head.last_seq - $3 + e.ord, $2, e.type, e.json
         FROM head, unnest($4::text[], $5::text[]) WITH ORDINALITY AS e(type, json, ord)
         RETURNING seq
       )
       SELECT max(seq) AS last, CASE WHEN max(seq) IS NOT NULL THEN pg_notify($6, json_build_array('e', $1::text, max(seq))::text) END AS notified
       FROM inserted`,
      [threadId, runId, events.length, events.map((e) => e.type), events.map((e) => e.json), this.channel],
    )
    const last = result.rows[0]?.last
    if (last === null || last === undefined) throw new RunNotActiveError(threadId, runId)
    const first = last - events.length + 1
    return events.map((e, i) => ({ seq: first + i, runId, type: e.type, json: e.json }))
  }

  /** Appends after the thread row is locked by the caller (positions cannot collide). */
  async #appendMessagesTx(
    q: Queryable,
    threadId: string,
    runId: string,
    messages: readonly Message[],
    now: number,
  ): Promise<void> {
    if (messages.length === 0) return
    await q.query(
      `INSERT INTO messages (thread_id, position, message_id, role, run_id, json, created_at)
       SELECT $1, (SELECT COALESCE(MAX(position), -1) FROM messages WHERE thread_id = $1) + m.ord, m.id, m.role, $2, m.json, $3
       FROM unnest($4::text[], $5::text[], $6::text[]) WITH ORDINALITY AS m(id, role, json, ord)`,
      [
        threadId,
        runId,
        now,
        messages.map((m) => m.id),
        messages.map((m) => m.role),
        messages.map((m) => JSON.stringify(m)),
      ],
    )
  }

  /**
   * A short transaction on one pooled connection. Deadlocks and serialization failures (never
   * expected with the single lock order, but cheap to survive) are retried.
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
        if (error instanceof RollbackWith) return error.value as T
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
export function createPostgresStore(options: PostgresStoreOptions): Promise<PostgresStore> {
  return PostgresStore.open(options)
}
