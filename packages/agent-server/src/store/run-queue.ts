import type { Message } from '@interlude/protocol'
import type { NewEvent, StoredEvent } from './records.ts'

/**
 * The per-thread queue of input that arrived while the thread was busy (docs/protocol.md#multitask): the input itself
 * is stored, in admission order, until the run before it ends and one process starts it as a run under its own runId
 * (docs/decisions.md#a-durable-run-queue). Both stores implement it; a host store without it refuses `enqueue` as
 * `reject` would.
 */
export interface QueuedInput {
  readonly threadId: string
  readonly runId: string
  readonly ownerId: string
  /** The admitted `RunAgentInput` as JSON text, started as if it had just arrived. */
  readonly input: string
  /** 1 = the next run to start. */
  readonly position: number
  readonly createdAt: number
  /** A steer (docs/protocol.md#multitask): the running run takes its message before its next model request. */
  readonly steer: boolean
}

export interface EnqueueRequest {
  readonly threadId: string
  readonly runId: string
  readonly ownerId: string
  readonly input: string
  /** `interrupt`: ahead of every queued input (it starts once the cancelled run ended). */
  readonly front: boolean
  /** A steer for the running run: taken by it (`takeSteers`), or started like queued input once no run is active. */
  readonly steer?: boolean
  readonly now: number
}

export interface EnqueueResult {
  readonly position: number
  /** `false`: this runId was queued already (a retry); its position is answered again and nothing is written. */
  readonly created: boolean
  /** Whether the stored row is a steer (for a retry: as it was first stored). */
  readonly steer: boolean
}

export interface TakeSteersRequest {
  readonly threadId: string
  /** The running run that takes them: fenced (`RunNotActiveError` unless it is the thread's active run). */
  readonly runId: string
  readonly now: number
  /** The log events that show a taken user message (`TEXT_MESSAGE_START` … `END`, role `user`). */
  readonly render: (message: Message) => readonly NewEvent[]
}

export interface TakenSteers {
  /** The steers' new user messages, appended to the thread in queue order (none: nothing was written). */
  readonly messages: readonly Message[]
  /** Their events as the log stored them, to publish. */
  readonly events: readonly StoredEvent[]
}

export interface RunQueueStore {
  /**
   * Appends (or, with `front`, prepends) the input to the thread's queue in one transaction serialised per thread,
   * so positions answered to concurrent callers are the order the inputs start in. Revision: 0.
   */
  enqueueInput(request: EnqueueRequest): Promise<EnqueueResult>
  /** The thread's queue, next first, with positions 1..n. */
  listQueuedInputs(threadId: string): Promise<QueuedInput[]>
  /** Removes a queued input (its run started, or it was cancelled): `false` when it was not queued. Revision: 0. */
  removeQueuedInput(threadId: string, runId: string): Promise<boolean>
  /** Threads with queued input and no active run, oldest queued input first (the recovery sweep). */
  listStartableQueues(limit: number): Promise<string[]>
  /** Whether a steer waits for the thread's running run: one indexed read, made before every model request. */
  hasSteers(threadId: string): Promise<boolean>
  /**
   * The running run takes the thread's steers, in one fenced transaction: their rows are removed, their user messages
   * (those the thread does not have yet) appended with their events. A steer whose runId is a run already (its row
   * outlived the start of that run) is not taken. Revision: +1 when a message was appended, else 0.
   */
  takeSteers(request: TakeSteersRequest): Promise<TakenSteers>
  /** The run that appended a message to the thread (a steer's retry after it was taken). */
  messageRunId(threadId: string, messageId: string): Promise<string | undefined>
}

/** A `run_queue` row as both stores read it. */
export interface QueueRow {
  thread_id: string
  run_id: string
  owner_id: string
  input: string
  created_at: number | string
  steer: number
}

/** A row of a thread's queue read in order: `index` 0 is position 1. */
export function toQueued(row: QueueRow, index: number): QueuedInput {
  return {
    threadId: row.thread_id,
    runId: row.run_id,
    ownerId: row.owner_id,
    input: row.input,
    position: index + 1,
    createdAt: Number(row.created_at),
    steer: Number(row.steer) === 1,
  }
}

/**
 * The user messages a steer's stored input adds to the thread: those whose id `known` does not have, each once. The
 * input was checked when it was stored; only ids may have become known since (another input carried them).
 */
export function steerMessages(input: string, known: (messageId: string) => boolean): Message[] {
  const { messages } = JSON.parse(input) as { messages: Message[] }
  return messages.filter((m) => m.role === 'user' && !known(m.id))
}

/** The columns every queue read selects. */
export const QUEUE_COLUMNS = 'thread_id, run_id, owner_id, input, created_at, steer'
