import type { Message } from '@interlude/protocol'
import type {
  BatchRow,
  EventRow,
  InterruptRow,
  RunKeyRow,
  RunLeaseRow,
  RunRow,
  ThreadHeadRow,
  ThreadRow,
  ToolCallRow,
} from '../rows.ts'
import type {
  AbandonedRunsQuery,
  BatchStatus,
  EventQuery,
  FinishRunRequest,
  NewBatch,
  NewEvent,
  NewToolCall,
  TakeOverRequest,
  MessagePageQuery,
  ThreadQuery,
  ToolCallStatus,
} from '../store.ts'
import { NOT_STARTED_CALL_STATUSES, OPEN_BATCH_STATUS, UNDECIDED_EXPIRY_POLICY } from '../statuses.ts'
import { sqlList, sqlString } from '../sql-literals.ts'
import { statement } from './query.ts'

/**
 * The SQL of the PostgreSQL store besides admission (`admission-statements.ts`), each statement
 * with its parameter order; the store is control flow over these.
 */

const OPEN_BATCH = sqlString(OPEN_BATCH_STATUS)
const NOT_STARTED = sqlList(NOT_STARTED_CALL_STATUSES)
const UNDECIDED = sqlString(UNDECIDED_EXPIRY_POLICY)

export type BatchWithInterrupts = BatchRow & { interrupts: InterruptRow[] }
/** The interrupts of batch `b` as one JSON array (`InterruptRow`s), for a select list. */
export const INTERRUPTS_OF_B = `COALESCE((
    SELECT json_agg(json_build_object('kind', i.kind, 'tool_call_id', i.tool_call_id, 'tool_name', i.tool_name, 'json', i.json) ORDER BY i.position)
    FROM interrupts i WHERE i.batch_id = b.batch_id), '[]'::json) AS interrupts`
/** A batch with its interrupts (as JSON), in one query. */
export const BATCH_WITH_INTERRUPTS = `
  SELECT b.*, ${INTERRUPTS_OF_B}
  FROM interrupt_batches b`

// ---- settings --------------------------------------------------------------------------------

export const ping = () => statement('SELECT 1', [])
export const getSetting = (key: string) =>
  statement<{ value: string }>('SELECT value FROM settings WHERE key = $1', [key])
export const insertSetting = (key: string, value: string) =>
  statement('INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING', [key, value])
export const upsertSetting = (key: string, value: string) =>
  statement('INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = $2', [
    key,
    value,
  ])

// ---- reads -----------------------------------------------------------------------------------

export const countRunning = (ownerId: string) =>
  // Queued input counts as running for the quota, a steer once no run takes it (docs/protocol.md#multitask).
  statement<{ n: number }>(
    `SELECT (SELECT COUNT(*) FROM threads WHERE owner_id = $1 AND status = 'running')::int
          + (SELECT COUNT(*) FROM run_queue q WHERE owner_id = $1 AND (steer = 0 OR NOT EXISTS
              (SELECT 1 FROM threads t WHERE t.thread_id = q.thread_id AND t.status = 'running')))::int AS n`,
    [ownerId],
  )
export const getThread = (threadId: string) =>
  statement<ThreadRow>('SELECT * FROM threads WHERE thread_id = $1', [threadId])

export const listThreads = (ownerId: string, query: ThreadQuery) =>
  statement<ThreadRow>(
    `SELECT * FROM threads
     WHERE owner_id = $1 AND ($2::text IS NULL OR status = $2)
       AND ($3::bigint IS NULL OR updated_at < $3 OR (updated_at = $3 AND thread_id > $4))
       AND ($5::bigint IS NULL OR EXISTS (
         SELECT 1 FROM interrupt_batches b
         WHERE b.thread_id = threads.thread_id AND b.status = ${OPEN_BATCH} AND (b.expires_at > $5 OR b.on_expiry = ${UNDECIDED})))
     ORDER BY updated_at DESC, thread_id ASC
     LIMIT $6`,
    [
      ownerId,
      query.status ?? null,
      query.after ? query.after.updatedAt : null,
      query.after ? query.after.threadId : null,
      query.pendingInterruptsAt ?? null,
      query.limit,
    ],
  )

export const listMessages = (threadId: string) =>
  statement<{ json: string }>('SELECT json FROM messages WHERE thread_id = $1 ORDER BY position', [threadId])

/** A page of messages (docs/protocol.md#threadsnapshot): sizes first, then only the rows of the page. */
export const messagePage = (threadId: string, query: MessagePageQuery) =>
  statement<{ position: number; json: string; bytes: number }>(
    `WITH newest AS (
       SELECT position, octet_length(json) AS bytes FROM messages
       WHERE thread_id = $1 AND ($2::bigint IS NULL OR position < $2)
       ORDER BY position DESC LIMIT $3),
     sized AS (
       SELECT position, bytes, SUM(bytes) OVER (ORDER BY position DESC ROWS UNBOUNDED PRECEDING) AS upto FROM newest)
     SELECT m.position, m.json, sized.bytes FROM sized
     JOIN messages m ON m.thread_id = $1 AND m.position = sized.position
     WHERE sized.upto = sized.bytes OR $4::bigint IS NULL OR sized.upto <= $4
     ORDER BY m.position`,
    [threadId, query.beforePosition ?? null, query.limit, query.maxBytes ?? null],
  )

export const firstUserMessage = (threadId: string) =>
  statement<{ position: number; json: string; bytes: number }>(
    `SELECT position, json, octet_length(json) AS bytes FROM messages
     WHERE thread_id = $1 AND role = 'user' ORDER BY position LIMIT 1`,
    [threadId],
  )

export const listToolCallIds = (threadId: string) =>
  statement<{ tool_call_id: string }>('SELECT tool_call_id FROM tool_calls WHERE thread_id = $1', [threadId])

/** The title from the first user message, when the thread has none yet. */
export const setTitleIfAbsent = (threadId: string, title: string) =>
  statement('UPDATE threads SET title = $2 WHERE thread_id = $1 AND title IS NULL', [threadId, title])

export const getRun = (threadId: string, runId: string) =>
  statement<RunRow>('SELECT * FROM runs WHERE thread_id = $1 AND run_id = $2', [threadId, runId])

export const getOpenBatch = (threadId: string) =>
  statement<BatchWithInterrupts>(`${BATCH_WITH_INTERRUPTS} WHERE b.thread_id = $1 AND b.status = ${OPEN_BATCH}`, [
    threadId,
  ])

export const getBatchOfInterrupt = (threadId: string, interruptId: string) =>
  statement<BatchWithInterrupts>(
    `${BATCH_WITH_INTERRUPTS} WHERE b.batch_id = (SELECT batch_id FROM interrupts WHERE interrupt_id = $1 AND thread_id = $2)`,
    [interruptId, threadId],
  )

export const listToolCalls = (threadId: string, statuses: readonly ToolCallStatus[] | undefined) =>
  statement<ToolCallRow>(
    'SELECT * FROM tool_calls WHERE thread_id = $1 AND ($2::text[] IS NULL OR status = ANY($2)) ORDER BY created_at, ordinal',
    [threadId, statuses ? [...statuses] : null],
  )

export const getToolCall = (threadId: string, toolCallId: string) =>
  statement<ToolCallRow>('SELECT * FROM tool_calls WHERE thread_id = $1 AND tool_call_id = $2', [threadId, toolCallId])

/** A tab's claim of a browser call waiting for its result: the ledger's attempt is the claim. */
export const claimToolCall = (threadId: string, toolCallId: string, claimId: string, now: number) =>
  statement(
    `UPDATE tool_calls SET attempt_run_id = $3, started_at = $4
     WHERE thread_id = $1 AND tool_call_id = $2 AND kind = 'client' AND status = 'awaiting_result'
       AND (attempt_run_id IS NULL OR attempt_run_id = $3)`,
    [threadId, toolCallId, claimId, now],
  )

export const readEvents = (threadId: string, query: EventQuery) =>
  statement<EventRow>(
    `SELECT seq, run_id, type, json FROM events
     WHERE thread_id = $1 AND seq > $2 AND ($3::text IS NULL OR run_id = $3)
     ORDER BY seq LIMIT $4`,
    [threadId, query.afterSeq ?? 0, query.runId ?? null, query.limit ?? null],
  )

export const pollThreads = (threadIds: readonly string[]) =>
  statement<ThreadHeadRow>('SELECT thread_id, last_seq, active_run_id FROM threads WHERE thread_id = ANY($1::text[])', [
    [...threadIds],
  ])

export const listAbandoned = (query: AbandonedRunsQuery) =>
  statement<RunKeyRow>(
    `SELECT thread_id, run_id FROM runs
     WHERE status = 'running' AND ($2 OR lease_until IS NULL OR lease_until < $1)
       AND ($3::text IS NULL OR executor_id IS NULL OR executor_id <> $3)
     ORDER BY created_at`,
    [query.now, query.all === true, query.excludeExecutor ?? null],
  )

// ---- thread writes (fenced ones change nothing unless the run is the thread's active run) -----

/** The fence that also locks the thread row, for writes that bump the revision elsewhere or not at all. */
export const lockIfActive = (threadId: string, runId: string) =>
  statement('SELECT 1 FROM threads WHERE thread_id = $1 AND active_run_id = $2 FOR UPDATE', [threadId, runId])

/** The fence of a write that commits one change (revision +1), optionally with a new state. */
export const bumpIfActive = (threadId: string, runId: string, now: number, state?: { readonly json: string }) =>
  state
    ? statement(
        'UPDATE threads SET state_json = $3, revision = revision + 1, updated_at = $4 WHERE thread_id = $1 AND active_run_id = $2',
        [threadId, runId, state.json, now],
      )
    : statement(
        'UPDATE threads SET revision = revision + 1, updated_at = $3 WHERE thread_id = $1 AND active_run_id = $2',
        [threadId, runId, now],
      )

/** The fence of `createBatch`, which commits one change (revision +1). */
export const interruptIfActive = (threadId: string, runId: string, now: number) =>
  statement(
    `UPDATE threads SET status = 'interrupted', revision = revision + 1, updated_at = $3 WHERE thread_id = $1 AND active_run_id = $2`,
    [threadId, runId, now],
  )

export const setState = (threadId: string, stateJson: string, now: number) =>
  statement('UPDATE threads SET state_json = $1, revision = revision + 1, updated_at = $2 WHERE thread_id = $3', [
    stateJson,
    now,
    threadId,
  ])

/** Part of `finishRun`, whose release bumps the revision once for the whole transaction. */
export const replaceState = (threadId: string, stateJson: string) =>
  statement('UPDATE threads SET state_json = $1 WHERE thread_id = $2', [stateJson, threadId])

/** The lock order of every write: the thread row first, then the rows of that thread. */
export const lockThread = (threadId: string) =>
  statement('SELECT 1 FROM threads WHERE thread_id = $1 FOR UPDATE', [threadId])

/** Ends the run's hold on the thread (interrupted while a batch is open): the one bump of `finishRun`. */
export const releaseThread = (threadId: string, runId: string, now: number) =>
  statement(
    `UPDATE threads SET
       status = CASE WHEN EXISTS (SELECT 1 FROM interrupt_batches WHERE thread_id = $1 AND status = ${OPEN_BATCH}) THEN 'interrupted' ELSE 'idle' END,
       active_run_id = NULL, revision = revision + 1, updated_at = $2
     WHERE thread_id = $1 AND active_run_id = $3`,
    [threadId, now, runId],
  )

/**
 * One statement: advance the thread's `last_seq` (only while `runId` is its active run — the
 * fence), insert the events with their seq, NOTIFY the channel (delivered at commit).
 */
/** No NOTIFY here: the store announces the new head after the commit (`notifier.ts` says why). */
export const appendEvents = (threadId: string, runId: string, events: readonly NewEvent[]) =>
  statement<{ last: number | null }>(
    `WITH head AS (
       UPDATE threads SET last_seq = last_seq + $3 WHERE thread_id = $1 AND active_run_id = $2 RETURNING last_seq
     ), inserted AS (
       INSERT INTO events (thread_id, seq, run_id, type, json)
       SELECT $1, head.last_seq - $3 + e.ord, $2, e.type, e.json
       FROM head, unnest($4::text[], $5::text[]) WITH ORDINALITY AS e(type, json, ord)
       RETURNING seq
     )
     SELECT max(seq) AS last FROM inserted`,
    [threadId, runId, events.length, events.map((e) => e.type), events.map((e) => e.json)],
  )

/**
 * Appends after the thread row is locked by the caller (positions cannot collide), and adds them to the thread's
 * running totals (the thread cap, docs/decisions.md#bounded-histories) in the same statement.
 */
export const appendMessages = (threadId: string, runId: string, messages: readonly Message[], now: number) =>
  statement(
    `WITH inserted AS (
       INSERT INTO messages (thread_id, position, message_id, role, run_id, json, created_at)
       SELECT $1, (SELECT COALESCE(MAX(position), -1) FROM messages WHERE thread_id = $1) + m.ord, m.id, m.role, $2, m.json, $3
       FROM unnest($4::text[], $5::text[], $6::text[]) WITH ORDINALITY AS m(id, role, json, ord)
       RETURNING octet_length(json) AS bytes)
     UPDATE threads SET message_count = message_count + (SELECT COUNT(*) FROM inserted),
       message_bytes = message_bytes + (SELECT COALESCE(SUM(bytes), 0) FROM inserted)
     WHERE thread_id = $1`,
    [
      threadId,
      runId,
      now,
      messages.map((m) => m.id),
      messages.map((m) => m.role),
      messages.map((m) => JSON.stringify(m)),
    ],
  )

// ---- tool calls, batches, runs ---------------------------------------------------------------

export const insertToolCall = (r: NewToolCall) =>
  statement(
    `INSERT INTO tool_calls (thread_id, tool_call_id, run_id, message_id, tool_name, args_text, kind, status, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [r.threadId, r.toolCallId, r.runId, r.messageId, r.toolName, r.argsText, r.kind, r.status, r.now],
  )

/**
 * The effects ledger in one statement: lock the thread row (waits for a concurrent recovery to
 * commit, then re-checks that the run is still active), refuse after a cancel request, start at most once.
 */
export const beginEffect = (threadId: string, toolCallId: string, runId: string, now: number) =>
  statement(
    `WITH active AS (SELECT 1 FROM threads WHERE thread_id = $3 AND active_run_id = $1 FOR UPDATE)
     UPDATE tool_calls SET status = 'started', attempt_run_id = $1, started_at = $2
     WHERE thread_id = $3 AND tool_call_id = $4 AND status IN ${NOT_STARTED}
       AND EXISTS (SELECT 1 FROM active)
       AND NOT EXISTS (SELECT 1 FROM runs WHERE thread_id = $3 AND run_id = $1 AND cancel_requested_at IS NOT NULL)`,
    [runId, now, threadId, toolCallId],
  )

/** What a refused `beginEffect` is explained from. */
export const effectFacts = (threadId: string, runId: string) =>
  statement<{ active: boolean; cancel: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM threads WHERE thread_id = $1 AND active_run_id = $2) AS active,
            EXISTS (SELECT 1 FROM runs WHERE thread_id = $1 AND run_id = $2 AND cancel_requested_at IS NOT NULL) AS cancel`,
    [threadId, runId],
  )

export const settleToolCall = (
  threadId: string,
  toolCallId: string,
  settled: { readonly status: ToolCallStatus; readonly result: string | null; readonly now: number },
) =>
  statement(
    'UPDATE tool_calls SET status = $1, result = $2, finished_at = $3 WHERE thread_id = $4 AND tool_call_id = $5',
    [settled.status, settled.result, settled.now, threadId, toolCallId],
  )

/** Settles a call only while it is still in one of `from`. */
export const closeToolCall = (
  threadId: string,
  call: Pick<NonNullable<FinishRunRequest['closeCalls']>[number], 'toolCallId' | 'status' | 'result' | 'from'>,
  now: number,
) =>
  statement(
    'UPDATE tool_calls SET status = $1, result = $2, finished_at = $3 WHERE thread_id = $4 AND tool_call_id = $5 AND status = ANY($6::text[])',
    [call.status, call.result, now, threadId, call.toolCallId, [...call.from]],
  )

export const insertInterrupts = (batch: NewBatch) =>
  statement(
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

export const closeBatch = (batchId: string, status: BatchStatus, now: number) =>
  statement(`UPDATE interrupt_batches SET status = $1, closed_at = $2 WHERE batch_id = $3 AND status = 'claimed'`, [
    status,
    now,
    batchId,
  ])

/** Records how the run ended, only while it is running. */
export const finishRun = (request: FinishRunRequest) =>
  statement(
    `UPDATE runs SET status = $1, outcome_json = $2, error_code = $3, finished_at = $4
     WHERE thread_id = $5 AND run_id = $6 AND status = 'running'`,
    [
      request.status,
      request.outcome === undefined ? null : JSON.stringify(request.outcome),
      request.errorCode ?? null,
      request.now,
      request.threadId,
      request.runId,
    ],
  )

/** Flags the running run and NOTIFYs the channel (a wake-up for executors in other processes). */
export const requestCancel = (threadId: string, runId: string, now: number, channel: string) =>
  statement<RunRow>(
    `WITH flagged AS (
       UPDATE runs SET cancel_requested_at = COALESCE(cancel_requested_at, $3)
       WHERE thread_id = $1 AND run_id = $2 AND status = 'running' RETURNING *
     )
     SELECT f.*, pg_notify($4, json_build_array('c', f.thread_id, f.run_id)::text) AS notified FROM flagged f`,
    [threadId, runId, now, channel],
  )

export const heartbeatRuns = (executorId: string, leaseUntil: number) =>
  statement<RunLeaseRow>(
    `UPDATE runs SET lease_until = $1 WHERE executor_id = $2 AND status = 'running' RETURNING thread_id, run_id, cancel_requested_at`,
    [leaseUntil, executorId],
  )

export const takeOverRun = (request: TakeOverRequest) =>
  statement<RunRow>(
    `UPDATE runs SET executor_id = $1, lease_until = $2
     WHERE thread_id = $3 AND run_id = $4 AND status = 'running' AND ($5 OR lease_until IS NULL OR lease_until < $6)
     RETURNING *`,
    [request.executorId, request.leaseUntil, request.threadId, request.runId, request.force, request.now],
  )
