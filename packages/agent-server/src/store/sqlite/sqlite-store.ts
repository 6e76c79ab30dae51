import fs from 'node:fs'
import path from 'node:path'
import Database from 'better-sqlite3'
import type { Message } from '@interlude/protocol'
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
  StoredEvent,
  TakeOverRequest,
  ThreadHead,
  ThreadQuery,
  ThreadRecord,
  ToolCallRecord,
  ToolCallStatus,
} from '../store.ts'
import { migrate } from './migrations.ts'
import type { BatchRow, EventRow, InterruptRow, RunRow, ThreadRow, ToolCallRow } from '../rows.ts'
import { toBatch, toRun, toThread, toToolCall } from '../rows.ts'

const u = <T>(value: T | null): T | undefined => (value === null ? undefined : value)

export interface SqliteStoreOptions {
  /** Milliseconds a writer waits for another process's lock. @default 5000 */
  readonly busyTimeoutMs?: number
}

/** Statuses from which an effect may start (anything else already started or settled). */
const STARTABLE: readonly ToolCallStatus[] = ['pending', 'awaiting_decision']

/**
 * The embedded store: one SQLite file in WAL mode via better-sqlite3 (synchronous, so every
 * transaction below is atomic within the process; `BEGIN IMMEDIATE` serialises writers across
 * processes). Created with its directory on first start; schema versioned by migrations.
 */
export class SqliteStore implements Store {
  readonly kind = 'sqlite'
  readonly path: string
  readonly #db: Database.Database
  readonly #stmts: ReturnType<typeof prepare>
  #closed = false

  constructor(file: string, options: SqliteStoreOptions = {}) {
    this.path = file
    if (file !== ':memory:') fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true })
    this.#db = new Database(file)
    this.#db.pragma('journal_mode = WAL')
    // NORMAL is durable across process crashes in WAL mode (only an OS crash can lose the tail).
    this.#db.pragma('synchronous = NORMAL')
    this.#db.pragma('foreign_keys = ON')
    this.#db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 5000}`)
    migrate(this.#db)
    this.#stmts = prepare(this.#db)
  }

  /** Direct access for tests and tooling (e.g. a before/after dump). */
  get database(): Database.Database {
    return this.#db
  }

  async ping(): Promise<void> {
    this.#db.prepare('SELECT 1').get()
  }

  async close(): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    this.#db.close()
  }

  async getOrCreateSetting(key: string, create: () => string): Promise<string> {
    return this.#write(() => {
      const row = this.#stmts.getSetting.get(key) as { value: string } | undefined
      if (row) return row.value
      const value = create()
      this.#stmts.insertSetting.run(key, value)
      return value
    })
  }

  async getThread(threadId: string): Promise<ThreadRecord | undefined> {
    const row = this.#stmts.getThread.get(threadId) as ThreadRow | undefined
    return row ? toThread(row) : undefined
  }

  async getAdmissionView(
    threadId: string,
    runId: string,
    options: { readonly history: boolean },
  ): Promise<AdmissionView | undefined> {
    // A deferred transaction is one WAL snapshot: the reads below are mutually consistent.
    return this.#db.transaction((): AdmissionView | undefined => {
      const s = this.#stmts
      const row = s.getThread.get(threadId) as ThreadRow | undefined
      if (!row) return undefined
      const run = s.getRun.get(threadId, runId) as RunRow | undefined
      const batch = s.getOpenBatch.get(threadId) as BatchRow | undefined
      return {
        thread: toThread(row),
        run: run ? toRun(run) : undefined,
        openBatch: batch ? this.#toBatch(batch) : undefined,
        messages: options.history
          ? (s.listMessages.all(threadId) as { json: string }[]).map((r) => JSON.parse(r.json) as Message)
          : [],
        awaitingResults: options.history
          ? (s.listToolCalls.all(threadId) as ToolCallRow[])
              .filter((r) => r.status === 'awaiting_result')
              .map(toToolCall)
          : [],
      }
    })()
  }

  async listThreads(ownerId: string, query: ThreadQuery): Promise<ThreadRecord[]> {
    const after = query.after
    const rows = this.#stmts.listThreads.all({
      owner: ownerId,
      status: query.status ?? null,
      afterUpdated: after ? after.updatedAt : null,
      afterThread: after ? after.threadId : null,
      pendingAt: query.pendingInterruptsAt ?? null,
      limit: query.limit,
    }) as ThreadRow[]
    return rows.map(toThread)
  }

  async listMessages(threadId: string): Promise<Message[]> {
    const rows = this.#stmts.listMessages.all(threadId) as { json: string }[]
    return rows.map((r) => JSON.parse(r.json) as Message)
  }

  async getRun(threadId: string, runId: string): Promise<RunRecord | undefined> {
    const row = this.#stmts.getRun.get(threadId, runId) as RunRow | undefined
    return row ? toRun(row) : undefined
  }

  async getOpenBatch(threadId: string): Promise<BatchRecord | undefined> {
    const row = this.#stmts.getOpenBatch.get(threadId) as BatchRow | undefined
    return row ? this.#toBatch(row) : undefined
  }

  async getBatchOfInterrupt(threadId: string, interruptId: string): Promise<BatchRecord | undefined> {
    const row = this.#stmts.getBatchOfInterrupt.get(interruptId, threadId) as BatchRow | undefined
    return row ? this.#toBatch(row) : undefined
  }

  async listToolCalls(
    threadId: string,
    filter: { readonly status?: readonly ToolCallStatus[] } = {},
  ): Promise<ToolCallRecord[]> {
    const rows = this.#stmts.listToolCalls.all(threadId) as ToolCallRow[]
    const wanted = filter.status
    return rows.filter((r) => wanted === undefined || wanted.includes(r.status)).map(toToolCall)
  }

  async getToolCall(threadId: string, toolCallId: string): Promise<ToolCallRecord | undefined> {
    const row = this.#stmts.getToolCall.get(threadId, toolCallId) as ToolCallRow | undefined
    return row ? toToolCall(row) : undefined
  }

  async startInputRun(request: StartInputRunRequest): Promise<StartRunResult> {
    return this.#write((): StartRunResult => {
      const s = this.#stmts
      const { threadId, runId, now } = request
      if (request.expectedRevision === null) {
        if (s.getThread.get(threadId)) return { ok: false, reason: 'thread_exists' }
        s.insertThread.run(threadId, request.ownerId, JSON.stringify(request.initialState ?? null), runId, now, now)
      } else {
        // The conditional update is the admission decision: same revision, no active run, no open batch.
        const changed = s.claimThreadForInput.run(runId, now, threadId, request.expectedRevision).changes
        if (changed === 0) {
          const row = s.getThread.get(threadId) as ThreadRow | undefined
          if (!row || row.revision !== request.expectedRevision) return { ok: false, reason: 'revision_changed' }
          if (row.active_run_id !== null) return { ok: false, reason: 'busy' }
          return { ok: false, reason: 'interrupted' }
        }
      }
      if (s.getRun.get(threadId, runId)) throw new RollbackWith({ ok: false, reason: 'run_exists' })
      s.insertRun.run(
        threadId,
        runId,
        'input',
        request.parentRunId ?? null,
        null,
        null,
        now,
        request.executorId,
        request.leaseUntil,
      )
      this.#appendMessagesTx(threadId, runId, request.messages, now)
      for (const r of request.toolResults) {
        s.settleToolCall.run(r.status, r.result, now, threadId, r.toolCallId)
      }
      return { ok: true, thread: toThread(s.getThread.get(threadId) as ThreadRow) }
    })
  }

  async claimBatch(request: ClaimBatchRequest): Promise<ClaimBatchResult> {
    return this.#write((): ClaimBatchResult => {
      const s = this.#stmts
      const { threadId, runId, batchId, now } = request
      // First admitted wins: the conditional update decides, not process memory.
      const claimed = s.claimBatch.run(
        request.decisionHash,
        JSON.stringify(request.decision),
        runId,
        now,
        batchId,
        threadId,
      ).changes
      if (claimed === 0) {
        const row = s.getBatch.get(batchId) as BatchRow | undefined
        if (row && row.claimed_by_run_id !== null && row.decision_hash !== null) {
          return {
            ok: false,
            reason: 'already_claimed',
            claimedByRunId: row.claimed_by_run_id,
            decisionHash: row.decision_hash,
          }
        }
        return { ok: false, reason: 'not_pending' }
      }
      if (s.getRun.get(threadId, runId)) throw new RollbackWith({ ok: false, reason: 'run_exists' })
      if (s.claimThreadForResume.run(runId, now, threadId).changes === 0)
        throw new RollbackWith({ ok: false, reason: 'busy' })
      s.insertRun.run(
        threadId,
        runId,
        'resume',
        null,
        batchId,
        request.decisionHash,
        now,
        request.executorId,
        request.leaseUntil,
      )
      return { ok: true, thread: toThread(s.getThread.get(threadId) as ThreadRow) }
    })
  }

  async appendEvents(threadId: string, runId: string, events: readonly NewEvent[]): Promise<StoredEvent[]> {
    if (events.length === 0) return []
    return this.#write(() => this.#appendEventsTx(threadId, runId, events))
  }

  async readEvents(threadId: string, query: EventQuery): Promise<StoredEvent[]> {
    const after = query.afterSeq ?? 0
    const limit = query.limit ?? -1
    const rows = (
      query.runId === undefined
        ? this.#stmts.readEvents.all(threadId, after, limit)
        : this.#stmts.readRunEvents.all(threadId, query.runId, after, limit)
    ) as EventRow[]
    return rows.map((r) => ({ seq: r.seq, runId: r.run_id, type: r.type, json: r.json }))
  }

  async pollThreads(threadIds: readonly string[]): Promise<ThreadHead[]> {
    if (threadIds.length === 0) return []
    const rows = this.#stmts.pollThreads.all(JSON.stringify(threadIds)) as {
      thread_id: string
      last_seq: number
      active_run_id: string | null
    }[]
    return rows.map((r) => ({ threadId: r.thread_id, lastSeq: r.last_seq, activeRunId: u(r.active_run_id) }))
  }

  async appendMessages(threadId: string, runId: string, messages: readonly Message[]): Promise<void> {
    if (messages.length === 0) return
    this.#write(() => {
      this.#fence(threadId, runId)
      this.#appendMessagesTx(threadId, runId, messages, Date.now())
      this.#stmts.bumpRevision.run(Date.now(), threadId)
    })
  }

  async setState(threadId: string, state: unknown): Promise<void> {
    this.#write(() => {
      this.#stmts.setState.run(JSON.stringify(state ?? null), Date.now(), threadId)
    })
  }

  async insertToolCalls(records: readonly NewToolCall[]): Promise<void> {
    if (records.length === 0) return
    this.#write(() => {
      for (const r of records) {
        this.#fence(r.threadId, r.runId)
        this.#stmts.insertToolCall.run(
          r.threadId,
          r.toolCallId,
          r.runId,
          r.messageId,
          r.toolName,
          r.argsText,
          r.kind,
          r.status,
          r.now,
        )
      }
    })
  }

  async beginEffect(threadId: string, toolCallId: string, runId: string, now: number): Promise<BeginEffectResult> {
    return this.#write((): BeginEffectResult => {
      const s = this.#stmts
      if (s.beginEffect.run(runId, now, threadId, toolCallId, threadId, runId, threadId, runId).changes === 1)
        return 'started'
      if (!s.isActive.get(threadId, runId)) return 'not_active'
      const run = s.getRun.get(threadId, runId) as RunRow | undefined
      if (run && run.cancel_requested_at !== null) return 'cancel_requested'
      return 'already_started'
    })
  }

  async settleToolCall(request: SettleToolCallRequest): Promise<void> {
    this.#write(() => {
      const s = this.#stmts
      this.#fence(request.threadId, request.runId)
      s.settleToolCall.run(request.status, request.result ?? null, request.now, request.threadId, request.toolCallId)
      if (request.message) this.#appendMessagesTx(request.threadId, request.runId, [request.message], request.now)
      if ('state' in request) s.setState.run(JSON.stringify(request.state ?? null), request.now, request.threadId)
      else s.bumpRevision.run(request.now, request.threadId)
    })
  }

  async createBatch(batch: NewBatch): Promise<void> {
    this.#write(() => {
      const s = this.#stmts
      this.#fence(batch.threadId, batch.runId)
      s.insertBatch.run(batch.batchId, batch.threadId, batch.runId, batch.createdAt, batch.expiresAt)
      batch.interrupts.forEach((item, position) => {
        s.insertInterrupt.run(
          item.interrupt.id,
          batch.batchId,
          batch.threadId,
          position,
          item.kind,
          item.toolCallId,
          item.toolName,
          JSON.stringify(item.interrupt),
        )
      })
      s.markInterrupted.run(batch.createdAt, batch.threadId)
    })
  }

  async finishRun(request: FinishRunRequest): Promise<StoredEvent[] | undefined> {
    return this.#write(() => {
      const s = this.#stmts
      const { threadId, runId, now } = request
      const finished = s.finishRun.run(
        request.status,
        request.outcome === undefined ? null : JSON.stringify(request.outcome),
        request.errorCode ?? null,
        now,
        threadId,
        runId,
      ).changes
      if (finished === 0) return undefined
      for (const call of request.closeCalls ?? []) {
        const from = JSON.stringify(call.from)
        if (s.closeToolCall.run(call.status, call.result, now, threadId, call.toolCallId, from).changes === 1) {
          this.#appendMessagesTx(threadId, runId, [call.message], now)
        }
      }
      if ('state' in request && request.state !== undefined)
        s.setState.run(JSON.stringify(request.state ?? null), now, threadId)
      const stored = this.#appendEventsTx(threadId, runId, request.events)
      if (request.closeBatch) s.closeBatch.run(request.closeBatch.status, now, request.closeBatch.batchId)
      const open = s.getOpenBatch.get(threadId) as BatchRow | undefined
      s.releaseThread.run(open ? 'interrupted' : 'idle', now, threadId, runId)
      return stored
    })
  }

  async requestCancel(threadId: string, runId: string, now: number): Promise<RunRecord | undefined> {
    return this.#write(() => {
      this.#stmts.requestCancel.run(now, threadId, runId)
      const row = this.#stmts.getRun.get(threadId, runId) as RunRow | undefined
      return row ? toRun(row) : undefined
    })
  }

  async heartbeatRuns(executorId: string, leaseUntil: number): Promise<RunHeartbeat[]> {
    return this.#write(() => {
      const rows = this.#stmts.heartbeatRuns.all(leaseUntil, executorId) as {
        thread_id: string
        run_id: string
        cancel_requested_at: number | null
      }[]
      return rows.map((r) => ({
        threadId: r.thread_id,
        runId: r.run_id,
        cancelRequested: r.cancel_requested_at !== null,
      }))
    })
  }

  async listAbandonedRuns(query: {
    readonly now: number
    readonly all?: boolean
    readonly excludeExecutor?: string
  }): Promise<RunKey[]> {
    const rows = this.#stmts.listAbandoned.all({
      now: query.now,
      all: query.all ? 1 : 0,
      exclude: query.excludeExecutor ?? null,
    }) as {
      thread_id: string
      run_id: string
    }[]
    return rows.map((r) => ({ threadId: r.thread_id, runId: r.run_id }))
  }

  async takeOverRun(request: TakeOverRequest): Promise<RunRecord | undefined> {
    return this.#write(() => {
      const s = this.#stmts
      const changed = s.takeOverRun.run(
        request.executorId,
        request.leaseUntil,
        request.threadId,
        request.runId,
        request.force ? 1 : 0,
        request.now,
      ).changes
      if (changed === 0) return undefined
      return toRun(s.getRun.get(request.threadId, request.runId) as RunRow)
    })
  }

  /** Throws unless `runId` is the thread's active run (inside a write transaction). */
  #fence(threadId: string, runId: string): void {
    if (!this.#stmts.isActive.get(threadId, runId)) throw new RunNotActiveError(threadId, runId)
  }

  #appendEventsTx(threadId: string, runId: string, events: readonly NewEvent[]): StoredEvent[] {
    if (events.length === 0) return []
    const s = this.#stmts
    // Fenced: only the thread's active run advances its log.
    const row = s.advanceSeq.get(events.length, threadId, runId) as { last_seq: number } | undefined
    if (!row) throw new RunNotActiveError(threadId, runId)
    let seq = row.last_seq - events.length
    const stored: StoredEvent[] = []
    for (const event of events) {
      seq += 1
      s.insertEvent.run(threadId, seq, runId, event.type, event.json)
      stored.push({ seq, runId, type: event.type, json: event.json })
    }
    return stored
  }

  #appendMessagesTx(threadId: string, runId: string, messages: readonly Message[], now: number): void {
    if (messages.length === 0) return
    const s = this.#stmts
    let position = (s.nextPosition.get(threadId) as { next: number }).next
    for (const message of messages) {
      s.insertMessage.run(threadId, position, message.id, message.role, runId, JSON.stringify(message), now)
      position += 1
    }
  }

  #toBatch(row: BatchRow): BatchRecord {
    return toBatch(row, this.#stmts.listInterrupts.all(row.batch_id) as InterruptRow[])
  }

  /** Runs `fn` in a `BEGIN IMMEDIATE` transaction; a thrown `RollbackWith` rolls back and returns its value. */
  #write<T>(fn: () => T): T {
    try {
      return this.#db.transaction(fn).immediate()
    } catch (error) {
      if (error instanceof RollbackWith) return error.value as T
      throw error
    }
  }
}

class RollbackWith {
  constructor(readonly value: unknown) {}
}

function prepare(db: Database.Database) {
  return {
    getSetting: db.prepare('SELECT value FROM settings WHERE key = ?'),
    insertSetting: db.prepare('INSERT INTO settings (key, value) VALUES (?, ?)'),
    getThread: db.prepare('SELECT * FROM threads WHERE thread_id = ?'),
    listThreads: db.prepare(
      `SELECT * FROM threads
       WHERE owner_id = @owner AND (@status IS NULL OR status = @status)
         AND (@afterUpdated IS NULL OR updated_at < @afterUpdated OR (updated_at = @afterUpdated AND thread_id > @afterThread))
         AND (@pendingAt IS NULL OR EXISTS (
           SELECT 1 FROM interrupt_batches b
           WHERE b.thread_id = threads.thread_id AND b.status = 'pending' AND b.expires_at > @pendingAt))
       ORDER BY updated_at DESC, thread_id ASC
       LIMIT @limit`,
    ),
    insertThread: db.prepare(
      `INSERT INTO threads (thread_id, owner_id, revision, status, state_json, active_run_id, last_seq, created_at, updated_at)
       VALUES (?, ?, 1, 'running', ?, ?, 0, ?, ?)`,
    ),
    claimThreadForInput: db.prepare(
      `UPDATE threads SET active_run_id = ?, status = 'running', revision = revision + 1, updated_at = ?
       WHERE thread_id = ? AND revision = ? AND active_run_id IS NULL AND status = 'idle'`,
    ),
    claimThreadForResume: db.prepare(
      `UPDATE threads SET active_run_id = ?, status = 'running', revision = revision + 1, updated_at = ?
       WHERE thread_id = ? AND active_run_id IS NULL`,
    ),
    markInterrupted: db.prepare(
      `UPDATE threads SET status = 'interrupted', revision = revision + 1, updated_at = ? WHERE thread_id = ?`,
    ),
    releaseThread: db.prepare(
      `UPDATE threads SET status = ?, active_run_id = NULL, revision = revision + 1, updated_at = ?
       WHERE thread_id = ? AND active_run_id = ?`,
    ),
    bumpRevision: db.prepare('UPDATE threads SET revision = revision + 1, updated_at = ? WHERE thread_id = ?'),
    setState: db.prepare(
      'UPDATE threads SET state_json = ?, revision = revision + 1, updated_at = ? WHERE thread_id = ?',
    ),
    advanceSeq: db.prepare(
      'UPDATE threads SET last_seq = last_seq + ? WHERE thread_id = ? AND active_run_id = ? RETURNING last_seq',
    ),
    isActive: db.prepare('SELECT 1 AS ok FROM threads WHERE thread_id = ? AND active_run_id = ?'),
    pollThreads: db.prepare(
      'SELECT thread_id, last_seq, active_run_id FROM threads WHERE thread_id IN (SELECT value FROM json_each(?))',
    ),
    insertEvent: db.prepare('INSERT INTO events (thread_id, seq, run_id, type, json) VALUES (?, ?, ?, ?, ?)'),
    readEvents: db.prepare(
      'SELECT seq, run_id, type, json FROM events WHERE thread_id = ? AND seq > ? ORDER BY seq LIMIT ?',
    ),
    readRunEvents: db.prepare(
      'SELECT seq, run_id, type, json FROM events WHERE thread_id = ? AND run_id = ? AND seq > ? ORDER BY seq LIMIT ?',
    ),
    listMessages: db.prepare('SELECT json FROM messages WHERE thread_id = ? ORDER BY position'),
    nextPosition: db.prepare('SELECT COALESCE(MAX(position), -1) + 1 AS next FROM messages WHERE thread_id = ?'),
    insertMessage: db.prepare(
      'INSERT INTO messages (thread_id, position, message_id, role, run_id, json, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
    ),
    getRun: db.prepare('SELECT * FROM runs WHERE thread_id = ? AND run_id = ?'),
    insertRun: db.prepare(
      `INSERT INTO runs (thread_id, run_id, kind, status, parent_run_id, batch_id, decision_hash, created_at, executor_id, lease_until)
       VALUES (?, ?, ?, 'running', ?, ?, ?, ?, ?, ?)`,
    ),
    requestCancel: db.prepare(
      `UPDATE runs SET cancel_requested_at = COALESCE(cancel_requested_at, ?) WHERE thread_id = ? AND run_id = ? AND status = 'running'`,
    ),
    heartbeatRuns: db.prepare(
      `UPDATE runs SET lease_until = ? WHERE executor_id = ? AND status = 'running' RETURNING thread_id, run_id, cancel_requested_at`,
    ),
    listAbandoned: db.prepare(
      `SELECT thread_id, run_id FROM runs
       WHERE status = 'running' AND (@all = 1 OR lease_until IS NULL OR lease_until < @now)
         AND (@exclude IS NULL OR executor_id IS NULL OR executor_id <> @exclude)
       ORDER BY created_at`,
    ),
    takeOverRun: db.prepare(
      `UPDATE runs SET executor_id = ?, lease_until = ?
       WHERE thread_id = ? AND run_id = ? AND status = 'running' AND (? = 1 OR lease_until IS NULL OR lease_until < ?)`,
    ),
    finishRun: db.prepare(
      `UPDATE runs SET status = ?, outcome_json = ?, error_code = ?, finished_at = ?
       WHERE thread_id = ? AND run_id = ? AND status = 'running'`,
    ),
    getBatch: db.prepare('SELECT * FROM interrupt_batches WHERE batch_id = ?'),
    getOpenBatch: db.prepare(`SELECT * FROM interrupt_batches WHERE thread_id = ? AND status = 'pending'`),
    getBatchOfInterrupt: db.prepare(
      `SELECT b.* FROM interrupts i JOIN interrupt_batches b ON b.batch_id = i.batch_id
       WHERE i.interrupt_id = ? AND i.thread_id = ?`,
    ),
    listInterrupts: db.prepare(
      'SELECT interrupt_id, kind, tool_call_id, tool_name, json FROM interrupts WHERE batch_id = ? ORDER BY position',
    ),
    insertBatch: db.prepare(
      `INSERT INTO interrupt_batches (batch_id, thread_id, run_id, status, created_at, expires_at)
       VALUES (?, ?, ?, 'pending', ?, ?)`,
    ),
    insertInterrupt: db.prepare(
      `INSERT INTO interrupts (interrupt_id, batch_id, thread_id, position, kind, tool_call_id, tool_name, json)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    claimBatch: db.prepare(
      `UPDATE interrupt_batches SET status = 'claimed', decision_hash = ?, decision_json = ?, claimed_by_run_id = ?, claimed_at = ?
       WHERE batch_id = ? AND thread_id = ? AND status = 'pending'`,
    ),
    closeBatch: db.prepare(
      `UPDATE interrupt_batches SET status = ?, closed_at = ? WHERE batch_id = ? AND status = 'claimed'`,
    ),
    listToolCalls: db.prepare('SELECT * FROM tool_calls WHERE thread_id = ? ORDER BY created_at, rowid'),
    getToolCall: db.prepare('SELECT * FROM tool_calls WHERE thread_id = ? AND tool_call_id = ?'),
    insertToolCall: db.prepare(
      `INSERT INTO tool_calls (thread_id, tool_call_id, run_id, message_id, tool_name, args_text, kind, status, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    beginEffect: db.prepare(
      `UPDATE tool_calls SET status = 'started', attempt_run_id = ?, started_at = ?
       WHERE thread_id = ? AND tool_call_id = ? AND status IN (${STARTABLE.map((x) => `'${x}'`).join(', ')})
         AND EXISTS (SELECT 1 FROM threads WHERE thread_id = ? AND active_run_id = ?)
         AND NOT EXISTS (SELECT 1 FROM runs WHERE thread_id = ? AND run_id = ? AND cancel_requested_at IS NOT NULL)`,
    ),
    closeToolCall: db.prepare(
      `UPDATE tool_calls SET status = ?, result = ?, finished_at = ?
       WHERE thread_id = ? AND tool_call_id = ? AND status IN (SELECT value FROM json_each(?))`,
    ),
    settleToolCall: db.prepare(
      'UPDATE tool_calls SET status = ?, result = ?, finished_at = ? WHERE thread_id = ? AND tool_call_id = ?',
    ),
  }
}

/** Opens (creating on first start) the SQLite store at `file`. */
export function createSqliteStore(file: string, options: SqliteStoreOptions = {}): SqliteStore {
  return new SqliteStore(file, options)
}
