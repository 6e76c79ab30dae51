import type Database from 'better-sqlite3'
import type { DecisionVia } from '@interlude/protocol'
import type {
  BatchRow,
  DecisionRow,
  EventRow,
  InterruptRow,
  PendingBatchRow,
  RunKeyRow,
  RunLeaseRow,
  RunRow,
  ThreadHeadRow,
  ThreadRow,
  ToolCallRow,
} from '../rows.ts'
import type { BatchStatus, RunStatus, ToolCallKind, ToolCallStatus } from '../store.ts'
import { NOT_STARTED_CALL_STATUSES, OPEN_BATCH_STATUS, UNDECIDED_EXPIRY_POLICY } from '../statuses.ts'
import { sqlList, sqlString } from '../sql-literals.ts'
import { outboxStatements } from './outbox-statements.ts'
import { voteStatements } from './vote-statements.ts'
import { prepareDecisionLinks } from './decision-links.ts'
import type { Prepare, Prepared } from './prepared.ts'

/** Every SQL statement of the SQLite store, prepared once per connection; the store is control flow over these. */
export type SqliteStatements = ReturnType<typeof prepareStatements>

const OPEN_BATCH = sqlString(OPEN_BATCH_STATUS)
const NOT_STARTED = sqlList(NOT_STARTED_CALL_STATUSES)
const UNDECIDED = sqlString(UNDECIDED_EXPIRY_POLICY)

/** A batch row `b` with its interrupts as one JSON array of `InterruptRow`s: a list of batches in one query. */
export type WithInterruptsJson<Row> = Row & { interrupts_json: string }
const INTERRUPTS_JSON = `(
  SELECT json_group_array(json_object('kind', i.kind, 'tool_call_id', i.tool_call_id, 'tool_name', i.tool_name, 'json', i.json) ORDER BY i.position)
  FROM interrupts i WHERE i.batch_id = b.batch_id) AS interrupts_json`

interface ThreadKey {
  threadId: string
}
interface RunKeyParams extends ThreadKey {
  runId: string
}
export function prepareStatements(db: Database.Database) {
  // Named parameters (`@name`) bind from one object: the statement's only argument.
  const prepare: Prepare = <Params extends unknown[] | object = [], Row = unknown>(source: string) =>
    db.prepare(source) as unknown as Prepared<Params extends unknown[] ? Params : [Params], Row>
  return {
    decisionLinks: prepareDecisionLinks(db),
    ping: prepare<[], { ok: number }>('SELECT 1 AS ok'),
    getSetting: prepare<[string], { value: string }>('SELECT value FROM settings WHERE key = ?'),
    insertSetting: prepare<[string, string]>('INSERT INTO settings (key, value) VALUES (?, ?)'),
    upsertSetting: prepare<[string, string]>(
      'INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
    ),

    // ---- threads
    getThread: prepare<[string], ThreadRow>('SELECT * FROM threads WHERE thread_id = ?'),
    // Queued input counts as running for the quota, a steer once no run takes it (docs/protocol.md#multitask).
    countRunning: prepare<[string, string], { n: number }>(
      `SELECT (SELECT COUNT(*) FROM threads WHERE owner_id = ? AND status = 'running')
            + (SELECT COUNT(*) FROM run_queue q WHERE owner_id = ? AND (steer = 0 OR NOT EXISTS
                (SELECT 1 FROM threads t WHERE t.thread_id = q.thread_id AND t.status = 'running'))) AS n`,
    ),
    listThreads: prepare<
      {
        owner: string
        status: string | null
        afterUpdated: number | null
        afterThread: string | null
        pendingAt: number | null
        limit: number
      },
      ThreadRow
    >(
      `SELECT * FROM threads
       WHERE owner_id = @owner AND (@status IS NULL OR status = @status)
         AND (@afterUpdated IS NULL OR updated_at < @afterUpdated OR (updated_at = @afterUpdated AND thread_id > @afterThread))
         AND (@pendingAt IS NULL OR EXISTS (
           SELECT 1 FROM interrupt_batches b
           WHERE b.thread_id = threads.thread_id AND b.status = ${OPEN_BATCH} AND (b.expires_at > @pendingAt OR b.on_expiry = ${UNDECIDED})))
       ORDER BY updated_at DESC, thread_id ASC
       LIMIT @limit`,
    ),
    /** A new thread, running its first run, at revision 1. */
    insertThread: prepare<{
      threadId: string
      ownerId: string
      stateJson: string
      runId: string
      now: number
      title: string | null
    }>(
      `INSERT INTO threads (thread_id, owner_id, revision, status, state_json, active_run_id, last_seq, created_at, updated_at, title)
       VALUES (@threadId, @ownerId, 1, 'running', @stateJson, @runId, 0, @now, @now, @title)`,
    ),
    /** The admission decision for input: same revision, no active run, no open batch. */
    claimThreadForInput: prepare<RunKeyParams & { now: number; expectedRevision: number }>(
      `UPDATE threads SET active_run_id = @runId, status = 'running', revision = revision + 1, updated_at = @now
       WHERE thread_id = @threadId AND revision = @expectedRevision AND active_run_id IS NULL AND status = 'idle'`,
    ),
    claimThreadForResume: prepare<RunKeyParams & { now: number }>(
      `UPDATE threads SET active_run_id = @runId, status = 'running', revision = revision + 1, updated_at = @now
       WHERE thread_id = @threadId AND active_run_id IS NULL`,
    ),
    markInterrupted: prepare<ThreadKey & { now: number }>(
      `UPDATE threads SET status = 'interrupted', revision = revision + 1, updated_at = @now WHERE thread_id = @threadId`,
    ),
    /** Ends the run's hold on the thread: the one revision bump of `finishRun`. */
    releaseThread: prepare<RunKeyParams & { status: 'idle' | 'interrupted'; now: number }>(
      `UPDATE threads SET status = @status, active_run_id = NULL, revision = revision + 1, updated_at = @now
       WHERE thread_id = @threadId AND active_run_id = @runId`,
    ),
    bumpRevision: prepare<ThreadKey & { now: number }>(
      'UPDATE threads SET revision = revision + 1, updated_at = @now WHERE thread_id = @threadId',
    ),
    setState: prepare<ThreadKey & { stateJson: string; now: number }>(
      'UPDATE threads SET state_json = @stateJson, revision = revision + 1, updated_at = @now WHERE thread_id = @threadId',
    ),
    /** Part of a larger change that bumps the revision on its own (`finishRun`). */
    replaceState: prepare<ThreadKey & { stateJson: string }>(
      'UPDATE threads SET state_json = @stateJson WHERE thread_id = @threadId',
    ),
    /** Fenced: only the thread's active run advances its log. */
    advanceSeq: prepare<RunKeyParams & { count: number }, { last_seq: number }>(
      'UPDATE threads SET last_seq = last_seq + @count WHERE thread_id = @threadId AND active_run_id = @runId RETURNING last_seq',
    ),
    isActive: prepare<RunKeyParams, { ok: number }>(
      'SELECT 1 AS ok FROM threads WHERE thread_id = @threadId AND active_run_id = @runId',
    ),
    pollThreads: prepare<[string], ThreadHeadRow>(
      'SELECT thread_id, last_seq, active_run_id FROM threads WHERE thread_id IN (SELECT value FROM json_each(?))',
    ),

    // ---- events
    insertEvent: prepare<RunKeyParams & { seq: number; type: string; json: string }>(
      'INSERT INTO events (thread_id, seq, run_id, type, json) VALUES (@threadId, @seq, @runId, @type, @json)',
    ),
    readEvents: prepare<ThreadKey & { after: number; limit: number }, EventRow>(
      'SELECT seq, run_id, type, json FROM events WHERE thread_id = @threadId AND seq > @after ORDER BY seq LIMIT @limit',
    ),
    readRunEvents: prepare<RunKeyParams & { after: number; limit: number }, EventRow>(
      `SELECT seq, run_id, type, json FROM events
       WHERE thread_id = @threadId AND run_id = @runId AND seq > @after ORDER BY seq LIMIT @limit`,
    ),

    // ---- messages
    listMessages: prepare<[string], { json: string }>(
      'SELECT json FROM messages WHERE thread_id = ? ORDER BY position',
    ),
    /** A page of messages (docs/protocol.md#threadsnapshot): sizes first, then only the rows of the page. */
    messagePage: prepare<
      ThreadKey & { before: number; limit: number; maxBytes: number },
      { position: number; json: string; bytes: number }
    >(
      `WITH newest AS (
         SELECT position, octet_length(json) AS bytes FROM messages
         WHERE thread_id = @threadId AND position < @before
         ORDER BY position DESC LIMIT @limit),
       sized AS (
         SELECT position, bytes, SUM(bytes) OVER (ORDER BY position DESC ROWS UNBOUNDED PRECEDING) AS upto FROM newest)
       SELECT m.position, m.json, sized.bytes FROM sized
       JOIN messages m ON m.thread_id = @threadId AND m.position = sized.position
       WHERE sized.upto = sized.bytes OR sized.upto <= @maxBytes
       ORDER BY m.position`,
    ),
    firstUserMessage: prepare<[string], { position: number; json: string; bytes: number }>(
      `SELECT position, json, octet_length(json) AS bytes FROM messages
       WHERE thread_id = ? AND role = 'user' ORDER BY position LIMIT 1`,
    ),
    knownMessageIds: prepare<ThreadKey & { idsJson: string }, { message_id: string }>(
      `SELECT message_id FROM messages
       WHERE thread_id = @threadId AND message_id IN (SELECT value FROM json_each(@idsJson))`,
    ),
    /**
     * The running totals of the thread cap (docs/decisions.md#bounded-histories), in the transaction of every append.
     */
    addMessageTotals: prepare<ThreadKey & { count: number; bytes: number }>(
      `UPDATE threads SET message_count = message_count + @count, message_bytes = message_bytes + @bytes
       WHERE thread_id = @threadId`,
    ),
    /** The title from the first user message, when the thread has none yet. */
    setTitleIfAbsent: prepare<ThreadKey & { title: string }>(
      'UPDATE threads SET title = @title WHERE thread_id = @threadId AND title IS NULL',
    ),
    nextPosition: prepare<[string], { next: number }>(
      'SELECT COALESCE(MAX(position), -1) + 1 AS next FROM messages WHERE thread_id = ?',
    ),
    insertMessage: prepare<
      RunKeyParams & { position: number; messageId: string; role: string; json: string; now: number }
    >(
      `INSERT INTO messages (thread_id, position, message_id, role, run_id, json, created_at)
       VALUES (@threadId, @position, @messageId, @role, @runId, @json, @now)`,
    ),

    // ---- runs
    getRun: prepare<[string, string], RunRow>('SELECT * FROM runs WHERE thread_id = ? AND run_id = ?'),
    insertRun: prepare<
      RunKeyParams & {
        kind: 'input' | 'resume'
        parentRunId: string | null
        batchId: string | null
        decisionHash: string | null
        now: number
        executorId: string
        leaseUntil: number
      }
    >(
      `INSERT INTO runs (thread_id, run_id, kind, status, parent_run_id, batch_id, decision_hash, created_at, executor_id, lease_until)
       VALUES (@threadId, @runId, @kind, 'running', @parentRunId, @batchId, @decisionHash, @now, @executorId, @leaseUntil)`,
    ),
    requestCancel: prepare<RunKeyParams & { now: number }>(
      `UPDATE runs SET cancel_requested_at = COALESCE(cancel_requested_at, @now)
       WHERE thread_id = @threadId AND run_id = @runId AND status = 'running'`,
    ),
    heartbeatRuns: prepare<{ leaseUntil: number; executorId: string }, RunLeaseRow>(
      `UPDATE runs SET lease_until = @leaseUntil WHERE executor_id = @executorId AND status = 'running'
       RETURNING thread_id, run_id, cancel_requested_at`,
    ),
    listAbandoned: prepare<{ now: number; all: 0 | 1; exclude: string | null }, RunKeyRow>(
      `SELECT thread_id, run_id FROM runs
       WHERE status = 'running' AND (@all = 1 OR lease_until IS NULL OR lease_until < @now)
         AND (@exclude IS NULL OR executor_id IS NULL OR executor_id <> @exclude)
       ORDER BY created_at`,
    ),
    takeOverRun: prepare<RunKeyParams & { executorId: string; leaseUntil: number; force: 0 | 1; now: number }>(
      `UPDATE runs SET executor_id = @executorId, lease_until = @leaseUntil
       WHERE thread_id = @threadId AND run_id = @runId AND status = 'running'
         AND (@force = 1 OR lease_until IS NULL OR lease_until < @now)`,
    ),
    finishRun: prepare<
      RunKeyParams & { status: RunStatus; outcomeJson: string | null; errorCode: string | null; now: number }
    >(
      `UPDATE runs SET status = @status, outcome_json = @outcomeJson, error_code = @errorCode, finished_at = @now
       WHERE thread_id = @threadId AND run_id = @runId AND status = 'running'`,
    ),

    // ---- interrupt batches
    /** A batch of this thread (any status): what a refused claim is explained from. */
    getBatch: prepare<[string, string], BatchRow>(
      'SELECT * FROM interrupt_batches WHERE batch_id = ? AND thread_id = ?',
    ),
    getOpenBatch: prepare<[string], BatchRow>(
      `SELECT * FROM interrupt_batches WHERE thread_id = ? AND status = ${OPEN_BATCH}`,
    ),
    getBatchOfInterrupt: prepare<[string, string], BatchRow>(
      `SELECT b.* FROM interrupts i JOIN interrupt_batches b ON b.batch_id = i.batch_id
       WHERE i.interrupt_id = ? AND i.thread_id = ?`,
    ),
    listInterrupts: prepare<[string], InterruptRow>(
      'SELECT interrupt_id, kind, tool_call_id, tool_name, json FROM interrupts WHERE batch_id = ? ORDER BY position',
    ),
    /** With what the pause holds (docs/time-travel.md): the messages so far, the checkpoints of the batch's calls. */
    insertBatch: prepare<
      RunKeyParams & { batchId: string; createdAt: number; expiresAt: number; onExpiry: string; callIdsJson: string }
    >(
      `INSERT INTO interrupt_batches (batch_id, thread_id, run_id, status, created_at, expires_at, on_expiry,
         pause_message_count, pause_checkpoints)
       VALUES (@batchId, @threadId, @runId, ${OPEN_BATCH}, @createdAt, @expiresAt, @onExpiry,
         (SELECT message_count FROM threads WHERE thread_id = @threadId),
         (SELECT COALESCE(json_group_object(tool_call_id, json), '{}') FROM tool_checkpoints
          WHERE thread_id = @threadId AND tool_call_id IN (SELECT value FROM json_each(@callIdsJson))))`,
    ),
    insertInterrupt: prepare<
      ThreadKey & {
        interruptId: string
        batchId: string
        position: number
        kind: string
        toolCallId: string
        toolName: string
        json: string
      }
    >(
      `INSERT INTO interrupts (interrupt_id, batch_id, thread_id, position, kind, tool_call_id, tool_name, json)
       VALUES (@interruptId, @batchId, @threadId, @position, @kind, @toolCallId, @toolName, @json)`,
    ),
    /** The admission decision for a resume: the first claim of an open batch wins. */
    claimBatch: prepare<RunKeyParams & { batchId: string; decisionHash: string; decisionJson: string; now: number }>(
      `UPDATE interrupt_batches
       SET status = 'claimed', decision_hash = @decisionHash, decision_json = @decisionJson, claimed_by_run_id = @runId, claimed_at = @now
       WHERE batch_id = @batchId AND thread_id = @threadId AND status = ${OPEN_BATCH}`,
    ),
    closeBatch: prepare<{ batchId: string; status: BatchStatus; now: number }>(
      `UPDATE interrupt_batches SET status = @status, closed_at = @now WHERE batch_id = @batchId AND status = 'claimed'`,
    ),
    /** The cross-owner inbox: open batches of every owner, newest first (keyset), with owner and title. */
    listPendingBatches: prepare<
      { beforeCreated: number | null; beforeBatch: string | null; limit: number; owner: string | null },
      WithInterruptsJson<PendingBatchRow>
    >(
      `SELECT b.*, t.owner_id, t.title, ${INTERRUPTS_JSON}
       FROM interrupt_batches b JOIN threads t ON t.thread_id = b.thread_id
       WHERE b.status = ${OPEN_BATCH}
         AND (@owner IS NULL OR t.owner_id = @owner)
         AND (@beforeCreated IS NULL OR (b.created_at, b.batch_id) < (@beforeCreated, @beforeBatch))
       ORDER BY b.created_at DESC, b.batch_id DESC
       LIMIT @limit`,
    ),
    /**
     * The expiry sweep: open batches past their deadline whose policy decides something (the deadline index). The page
     * is chosen first and only its rows get their interrupts: SQLite would otherwise build the JSON of every due row
     * before sorting ties on the deadline (thousands of batches created at once share one).
     */
    listDueBatches: prepare<{ now: number; limit: number }, WithInterruptsJson<BatchRow>>(
      `WITH due AS (
         SELECT b.batch_id FROM interrupt_batches b
         WHERE b.status = ${OPEN_BATCH} AND b.expires_at <= @now AND b.on_expiry <> ${UNDECIDED}
         ORDER BY b.expires_at, b.batch_id
         LIMIT @limit)
       SELECT b.*, ${INTERRUPTS_JSON}
       FROM due JOIN interrupt_batches b ON b.batch_id = due.batch_id
       ORDER BY b.expires_at, b.batch_id`,
    ),

    // ---- decision records (written by the claim, never updated)
    /** The batch's interrupt ids are read here, in batch order, inside the claim's transaction. */
    insertDecision: prepare<
      RunKeyParams & { batchId: string; entries: string; decidedBy: string; via: DecisionVia; now: number }
    >(
      `INSERT INTO decisions (thread_id, run_id, batch_id, interrupt_ids, entries, decided_by, via, decided_at)
       VALUES (@threadId, @runId, @batchId,
         (SELECT json_group_array(interrupt_id ORDER BY position) FROM interrupts WHERE batch_id = @batchId),
         @entries, @decidedBy, @via, @now)`,
    ),
    listDecisions: prepare<[string], DecisionRow>(
      `SELECT *, (SELECT b.run_id FROM interrupt_batches b WHERE b.batch_id = decisions.batch_id) AS batch_run_id
       FROM decisions WHERE thread_id = ? AND vote_kind IS NOT 'reminder' ORDER BY rowid`,
    ),
    getDecision: prepare<
      [string, string],
      DecisionRow
    >(`SELECT *, (SELECT b.run_id FROM interrupt_batches b WHERE b.batch_id = decisions.batch_id) AS batch_run_id
       FROM decisions WHERE thread_id = ? AND run_id = ? AND vote_kind IS NOT 'reminder'`),

    ...outboxStatements(prepare),
    ...voteStatements(prepare),

    // ---- tool calls
    listToolCalls: prepare<[string], ToolCallRow>(
      'SELECT * FROM tool_calls WHERE thread_id = ? ORDER BY created_at, rowid',
    ),
    listToolCallsByStatus: prepare<ThreadKey & { statusesJson: string }, ToolCallRow>(
      `SELECT * FROM tool_calls WHERE thread_id = @threadId AND status IN (SELECT value FROM json_each(@statusesJson))
       ORDER BY created_at, rowid`,
    ),
    listToolCallIds: prepare<[string], { tool_call_id: string }>(
      'SELECT tool_call_id FROM tool_calls WHERE thread_id = ?',
    ),
    knownToolCallIds: prepare<ThreadKey & { idsJson: string }, { tool_call_id: string }>(
      `SELECT tool_call_id FROM tool_calls
       WHERE thread_id = @threadId AND tool_call_id IN (SELECT value FROM json_each(@idsJson))`,
    ),
    getToolCall: prepare<[string, string], ToolCallRow>(
      'SELECT * FROM tool_calls WHERE thread_id = ? AND tool_call_id = ?',
    ),
    insertToolCall: prepare<
      RunKeyParams & {
        toolCallId: string
        messageId: string
        toolName: string
        argsText: string
        kind: ToolCallKind
        status: ToolCallStatus
        now: number
      }
    >(
      `INSERT INTO tool_calls (thread_id, tool_call_id, run_id, message_id, tool_name, args_text, kind, status, created_at)
       VALUES (@threadId, @toolCallId, @runId, @messageId, @toolName, @argsText, @kind, @status, @now)`,
    ),
    /** The effects ledger: start at most once, only for the active run, never after a cancel request. */
    beginEffect: prepare<RunKeyParams & { toolCallId: string; now: number }>(
      `UPDATE tool_calls SET status = 'started', attempt_run_id = @runId, started_at = @now
       WHERE thread_id = @threadId AND tool_call_id = @toolCallId AND status IN ${NOT_STARTED}
         AND EXISTS (SELECT 1 FROM threads WHERE thread_id = @threadId AND active_run_id = @runId)
         AND NOT EXISTS (SELECT 1 FROM runs WHERE thread_id = @threadId AND run_id = @runId AND cancel_requested_at IS NOT NULL)`,
    ),
    /** Settles a call only while it is still in one of `fromJson` (a JSON array of statuses). */
    closeToolCall: prepare<
      ThreadKey & { toolCallId: string; status: ToolCallStatus; result: string; now: number; fromJson: string }
    >(
      `UPDATE tool_calls SET status = @status, result = @result, finished_at = @now
       WHERE thread_id = @threadId AND tool_call_id = @toolCallId AND status IN (SELECT value FROM json_each(@fromJson))`,
    ),
    /** A tab's claim of a browser call waiting for its result: the ledger's attempt is the claim. */
    claimToolCall: prepare<ThreadKey & { toolCallId: string; claimId: string; now: number }>(
      `UPDATE tool_calls SET attempt_run_id = @claimId, started_at = @now
       WHERE thread_id = @threadId AND tool_call_id = @toolCallId AND kind = 'client' AND status = 'awaiting_result'
         AND (attempt_run_id IS NULL OR attempt_run_id = @claimId)`,
    ),
    settleToolCall: prepare<
      ThreadKey & { toolCallId: string; status: ToolCallStatus; result: string | null; now: number }
    >(
      `UPDATE tool_calls SET status = @status, result = @result, finished_at = @now
       WHERE thread_id = @threadId AND tool_call_id = @toolCallId`,
    ),
  }
}
