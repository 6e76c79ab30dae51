import type { BatchRecord, NewBatch } from '../store/store.ts'
import { OPEN_BATCH_STATUS } from '../store/statuses.ts'

/** A thread's open batch as this process last saw it, and the thread's owner (which never changes). */
export interface KnownOpenBatch {
  readonly ownerId: string
  readonly batch: BatchRecord
}

/** Entries kept at most; the oldest is forgotten first. A batch is a few kilobytes (its interrupts and schemas). */
export const OPEN_BATCH_CACHE_SIZE = 5_000

/**
 * The open batches this process wrote or read, by thread key: a resume for one of them is admitted with one
 * statement, the conditional claim, instead of a read and the claim (`admit-resume.ts`). Never an authority: the
 * claim re-checks in the database that the batch is still open and the thread idle, and any refusal, stale entry or
 * failed claim sends the resume through the full admission, which reads everything again. So an entry made stale by
 * another replica, the expiry sweep or a thread that moved on costs one statement, never a wrong answer. A batch's
 * interrupts, deadlines and policy never change while it is open, and a thread's owner never changes.
 */
export class OpenBatchCache {
  readonly #entries = new Map<string, KnownOpenBatch>()
  readonly #max: number

  constructor(max = OPEN_BATCH_CACHE_SIZE) {
    this.#max = max
  }

  get size(): number {
    return this.#entries.size
  }

  /** A batch this process just stored (open, undecided). */
  created(ownerId: string, batch: NewBatch): void {
    const { batchId, threadId, runId, interrupts, createdAt, expiresAt, onExpiry } = batch
    this.remember(ownerId, {
      batchId,
      threadId,
      runId,
      status: OPEN_BATCH_STATUS,
      interrupts,
      createdAt,
      expiresAt,
      decisionHash: undefined,
      decision: undefined,
      claimedByRunId: undefined,
      onExpiry,
    })
  }

  /** An open batch read from the store. */
  remember(ownerId: string, batch: BatchRecord): void {
    if (batch.status !== OPEN_BATCH_STATUS) return
    this.#entries.delete(batch.threadId)
    this.#entries.set(batch.threadId, { ownerId, batch })
    if (this.#entries.size > this.#max) this.#entries.delete(this.#entries.keys().next().value!)
  }

  /** The entry of `threadKey`, removed: each is tried once; the full admission remembers it again if still open. */
  take(threadKey: string): KnownOpenBatch | undefined {
    const entry = this.#entries.get(threadKey)
    if (entry !== undefined) this.#entries.delete(threadKey)
    return entry
  }

  forget(threadKey: string): void {
    this.#entries.delete(threadKey)
  }
}
