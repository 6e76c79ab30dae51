import type {
  DecisionRecord,
  DecisionVia,
  ExpiryPolicy,
  Interrupt,
  Message,
  ResumeEntry,
  RunFinishedOutcome,
  ThreadStatus,
} from '@interlude/protocol'
import type {
  BatchRecord,
  BatchStatus,
  InterruptKind,
  OutboxDelivery,
  OutboxStatus,
  PendingBatchRecord,
  RunHeartbeat,
  RunKey,
  RunKind,
  RunRecord,
  RunStatus,
  StoredEvent,
  StoredInterrupt,
  StoredMessage,
  ThreadHead,
  ThreadRecord,
  ToolCallKind,
  ToolCallRecord,
  ToolCallStatus,
  UsageCounts,
} from './store.ts'

/** Database rows, shared by the SQLite and PostgreSQL stores (same column names in both). */
export interface ThreadRow {
  thread_id: string
  owner_id: string
  revision: number
  status: ThreadStatus
  state_json: string
  active_run_id: string | null
  last_seq: number
  created_at: number
  updated_at: number
  title: string | null
  message_count: number
  message_bytes: number
}
export interface RunRow {
  thread_id: string
  run_id: string
  kind: RunKind
  status: RunStatus
  parent_run_id: string | null
  batch_id: string | null
  decision_hash: string | null
  outcome_json: string | null
  error_code: string | null
  created_at: number
  finished_at: number | null
  executor_id: string | null
  lease_until: number | null
  cancel_requested_at: number | null
  /** Added by `0007-run-token-usage` (`migration-ids.ts`); BIGINT arrives as a string from PostgreSQL. */
  input_tokens?: number | string
  output_tokens?: number | string
}
export interface BatchRow {
  batch_id: string
  thread_id: string
  run_id: string
  status: BatchStatus
  created_at: number
  expires_at: number
  decision_hash: string | null
  decision_json: string | null
  claimed_by_run_id: string | null
  on_expiry: ExpiryPolicy
}
/** A batch with the owner and title of its thread (the inbox join). */
export interface PendingBatchRow extends BatchRow {
  owner_id: string
  title: string | null
}
export interface InterruptRow {
  kind: InterruptKind
  tool_call_id: string
  tool_name: string
  json: string
}
export interface ToolCallRow {
  thread_id: string
  tool_call_id: string
  run_id: string
  message_id: string
  tool_name: string
  args_text: string
  kind: ToolCallKind
  status: ToolCallStatus
  result: string | null
  attempt_run_id: string | null
  started_at: number | null
  finished_at: number | null
}
export interface EventRow {
  seq: number
  run_id: string
  type: string
  json: string
}
export interface ThreadHeadRow {
  thread_id: string
  last_seq: number
  active_run_id: string | null
}
export interface RunKeyRow {
  thread_id: string
  run_id: string
}
export interface RunLeaseRow extends RunKeyRow {
  cancel_requested_at: number | null
}

export interface DecisionRow {
  thread_id: string
  run_id: string
  batch_id: string
  /** JSON array of the batch's interrupt ids, in batch order. */
  interrupt_ids: string
  /** JSON array of the resume entries. */
  entries: string
  decided_by: string
  via: DecisionVia
  decided_at: number
  /** JSON array of the approvals that went stale (`0010-stale-decisions`); NULL: none. */
  stale_interrupt_ids?: string | null
  /** The decided batch's public id: the run that paused with it (selected with the record, docs/time-travel.md). */
  batch_run_id?: string | null
  /** `0015-approval-votes`: `vote` or `escalation`; NULL: a decision of its own. */
  vote_kind?: 'vote' | 'escalation' | 'reminder' | null
  vote_stage?: number | null
}
export interface OutboxRow {
  delivery_id: string
  endpoint: string
  event_type: string
  payload: string
  status: OutboxStatus
  attempts: number
  created_at: number
  next_attempt_at: number
  last_error: string | null
  locked_by: string | null
  locked_until: number | null
}

const u = <T>(value: T | null | undefined): T | undefined => (value === null || value === undefined ? undefined : value)

export function toThread(row: ThreadRow): ThreadRecord {
  return {
    threadId: row.thread_id,
    ownerId: row.owner_id,
    revision: Number(row.revision),
    status: row.status,
    state: JSON.parse(row.state_json) as unknown,
    activeRunId: u(row.active_run_id),
    lastSeq: Number(row.last_seq),
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
    title: u(row.title),
    messageCount: Number(row.message_count ?? 0),
    messageBytes: Number(row.message_bytes ?? 0),
  }
}

export function toRun(row: RunRow): RunRecord {
  return {
    threadId: row.thread_id,
    runId: row.run_id,
    kind: row.kind,
    status: row.status,
    parentRunId: u(row.parent_run_id),
    batchId: u(row.batch_id),
    decisionHash: u(row.decision_hash),
    outcome: row.outcome_json === null ? undefined : (JSON.parse(row.outcome_json) as RunFinishedOutcome),
    errorCode: u(row.error_code),
    createdAt: Number(row.created_at),
    finishedAt: row.finished_at === null ? undefined : Number(row.finished_at),
    executorId: u(row.executor_id),
    leaseUntil: row.lease_until === null ? undefined : Number(row.lease_until),
    cancelRequested: row.cancel_requested_at !== null && row.cancel_requested_at !== undefined,
    ...usageOfRow(row),
  }
}

/** The run's token counts, when its model calls reported any. */
function usageOfRow(row: RunRow): { usage?: UsageCounts } {
  const inputTokens = Number(row.input_tokens ?? 0)
  const outputTokens = Number(row.output_tokens ?? 0)
  return inputTokens + outputTokens > 0
    ? { usage: { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens } }
    : {}
}

export function toToolCall(row: ToolCallRow): ToolCallRecord {
  return {
    threadId: row.thread_id,
    toolCallId: row.tool_call_id,
    runId: row.run_id,
    messageId: row.message_id,
    toolName: row.tool_name,
    argsText: row.args_text,
    kind: row.kind,
    status: row.status,
    result: u(row.result),
    attemptRunId: u(row.attempt_run_id),
    startedAt: row.started_at === null ? undefined : Number(row.started_at),
    finishedAt: row.finished_at === null ? undefined : Number(row.finished_at),
  }
}

export function toBatch(row: BatchRow, interrupts: readonly InterruptRow[]): BatchRecord {
  return {
    batchId: row.batch_id,
    threadId: row.thread_id,
    runId: row.run_id,
    status: row.status,
    interrupts: interrupts.map((r): StoredInterrupt => ({
      interrupt: JSON.parse(r.json) as Interrupt,
      kind: r.kind,
      toolCallId: r.tool_call_id,
      toolName: r.tool_name,
    })),
    createdAt: Number(row.created_at),
    expiresAt: Number(row.expires_at),
    decisionHash: u(row.decision_hash),
    decision: row.decision_json === null ? undefined : (JSON.parse(row.decision_json) as ResumeEntry[]),
    claimedByRunId: u(row.claimed_by_run_id),
    onExpiry: row.on_expiry,
  }
}

export function toPendingBatch(row: PendingBatchRow, interrupts: readonly InterruptRow[]): PendingBatchRecord {
  return { ...toBatch(row, interrupts), ownerId: row.owner_id, title: u(row.title) }
}

/** The protocol's record: `at` is RFC 3339 UTC (docs/approvals.md#decision-records). */
export function toDecision(row: DecisionRow): DecisionRecord {
  return {
    threadId: row.thread_id,
    runId: row.run_id,
    ...(row.batch_run_id ? { batchId: row.batch_run_id } : {}),
    interruptIds: JSON.parse(row.interrupt_ids) as string[],
    entries: JSON.parse(row.entries) as ResumeEntry[],
    decidedBy: row.decided_by,
    via: row.via,
    at: new Date(Number(row.decided_at)).toISOString(),
    ...(row.stale_interrupt_ids
      ? { outcome: 'stale' as const, staleInterruptIds: JSON.parse(row.stale_interrupt_ids) as string[] }
      : {}),
    ...(row.vote_kind === 'vote' ? { vote: true as const } : {}),
    ...(row.vote_kind ? { stage: Number(row.vote_stage ?? 0) } : {}),
  }
}

export function toOutboxDelivery(row: OutboxRow): OutboxDelivery {
  return {
    deliveryId: row.delivery_id,
    endpoint: row.endpoint,
    eventType: row.event_type,
    payload: row.payload,
    status: row.status,
    attempts: Number(row.attempts),
    createdAt: Number(row.created_at),
    nextAttemptAt: Number(row.next_attempt_at),
    lastError: u(row.last_error),
    lockedBy: u(row.locked_by),
    lockedUntil: row.locked_until === null ? undefined : Number(row.locked_until),
  }
}

export function toStoredEvent(row: EventRow): StoredEvent {
  return { seq: Number(row.seq), runId: row.run_id, type: row.type, json: row.json }
}

export function toThreadHead(row: ThreadHeadRow): ThreadHead {
  return { threadId: row.thread_id, lastSeq: Number(row.last_seq), activeRunId: u(row.active_run_id) }
}

export function toRunKey(row: RunKeyRow): RunKey {
  return { threadId: row.thread_id, runId: row.run_id }
}

export function toRunHeartbeat(row: RunLeaseRow): RunHeartbeat {
  return { threadId: row.thread_id, runId: row.run_id, cancelRequested: row.cancel_requested_at !== null }
}

/** A message row of a page (`Store.listMessagePage`): position, stored JSON and its size in bytes. */
export function toStoredMessage(row: { position: number; json: string; bytes: number }): StoredMessage {
  return { position: Number(row.position), message: JSON.parse(row.json) as Message, bytes: Number(row.bytes) }
}
