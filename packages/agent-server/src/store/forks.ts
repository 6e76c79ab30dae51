import type { ForkPoint, Message } from '@interlude/protocol'
import type { BatchRecord, StoredInterrupt, ToolCallRecord } from './records.ts'
import type { NewToolCall } from './requests.ts'

/**
 * What the stores keep and answer for thread forks (docs/time-travel.md). Reads are bounded (by id, by index, or by
 * the fork's prefix); the one write, `createFork`, is one short transaction that copies the prefix set-based
 * (INSERT … SELECT: no row of the history passes through the process) and never locks the parent's rows.
 */
export interface ForkStore {
  /** One message of a thread by id or by position, with the run that wrote it. */
  getForkMessage(
    threadId: string,
    at: { readonly messageId: string } | { readonly position: number },
  ): Promise<ForkMessage | undefined>
  /** The batch the run `runId` paused with (any status) and what its pause held; `undefined` when it paused with none. */
  getBatchOfRun(threadId: string, runId: string): Promise<PausedBatch | undefined>
  /**
   * The calls recorded by the messages at positions `<= lastPosition` whose tool message is not among them (asked
   * before the fork point, answered after it or never): the fork settles them as cancelled.
   */
  listUnansweredCalls(threadId: string, lastPosition: number): Promise<ToolCallRecord[]>
  /** The JSON of the newest `STATE_SNAPSHOT` in the log before `beforeSeq` (all: absent), of run `runId` if given. */
  getLastStateSnapshot(
    threadId: string,
    query: { readonly beforeSeq?: number; readonly runId?: string },
  ): Promise<string | undefined>
  /** Writes the fork (one transaction). `false`: a thread with the fork's key exists already; nothing was written. */
  createFork(fork: NewFork): Promise<boolean>
  /** Where the thread was forked from, if it is a fork. */
  getForkOrigin(threadId: string): Promise<ForkOrigin | undefined>
  /** The forks of a thread, oldest first (at most `limit`). */
  listForks(parentThreadId: string, limit: number): Promise<ForkChild[]>
}

export interface ForkMessage {
  readonly position: number
  readonly runId: string | undefined
  readonly message: Message
}

/** A batch with what its pause held (absent for a batch stored before `0013-thread-forks`). */
export interface PausedBatch {
  readonly batch: BatchRecord
  readonly pause: BatchPause | undefined
}

export interface BatchPause {
  /** Messages the thread held when the batch was stored: the pause's history is positions `< messageCount`. */
  readonly messageCount: number
  /** The checkpoints of the batch's calls at the pause, by toolCallId. */
  readonly checkpoints: Readonly<Record<string, string>>
}

export interface ForkOrigin {
  readonly parentThreadId: string
  readonly at: ForkPoint
}

export interface ForkChild {
  readonly threadId: string
  readonly at: ForkPoint
  readonly createdAt: number
}

/** A fork as `createFork` writes it. Thread ids are store keys. */
export interface NewFork {
  readonly threadId: string
  readonly ownerId: string
  readonly parentThreadId: string
  readonly at: ForkPoint
  /** Messages at positions `0..lastPosition` of the parent are copied (-1: none). */
  readonly lastPosition: number
  /** Copied messages whose JSON the fork replaces (an edit, a response whose calls got new ids), by message id. */
  readonly replaced: readonly Message[]
  /** Messages appended after the copied ones (the results of calls the fork settles as cancelled). */
  readonly appended: readonly Message[]
  /** Parent calls the fork does not copy (a paused response's calls, re-recorded under new ids in `calls`). */
  readonly skipCallIds: readonly string[]
  /** Calls recorded as they are (new ids, their status at the pause). */
  readonly calls: readonly NewToolCall[]
  /** Parent calls the fork records as cancelled with this result (their `appended` message says so). */
  readonly cancelled: { readonly toolCallIds: readonly string[]; readonly result: string }
  /** Checkpoints of `calls`, by (new) toolCallId. */
  readonly checkpoints: Readonly<Record<string, string>>
  readonly stateJson: string
  readonly title: string | undefined
  /** A fork at a batch: paused at its question again (the run that paused is recorded in the fork too). */
  readonly batch?: ForkBatch
  readonly now: number
}

export interface ForkBatch {
  readonly batchId: string
  /** The run that paused with it (the parent's run id: the batch's public id). */
  readonly runId: string
  readonly interrupts: readonly StoredInterrupt[]
  readonly expiresAt: number
  readonly onExpiry: BatchRecord['onExpiry']
  /** The run's outcome as the fork's run view shows it. */
  readonly outcomeJson: string
}
