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
}

export interface EnqueueRequest {
  readonly threadId: string
  readonly runId: string
  readonly ownerId: string
  readonly input: string
  /** `interrupt`: ahead of every queued input (it starts once the cancelled run ended). */
  readonly front: boolean
  readonly now: number
}

export interface EnqueueResult {
  readonly position: number
  /** `false`: this runId was queued already (a retry); its position is answered again and nothing is written. */
  readonly created: boolean
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
}

/** A `run_queue` row as both stores read it. */
export interface QueueRow {
  thread_id: string
  run_id: string
  owner_id: string
  input: string
  created_at: number | string
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
  }
}
