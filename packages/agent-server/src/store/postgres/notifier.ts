import type pg from 'pg'
import { statement } from './query.ts'

/**
 * Announces appended events on the schema's NOTIFY channel after their commit, coalesced: one statement carries the
 * heads of every thread appended to since the last one (`["e", threadId, seq]` each, the payload replicas parse).
 *
 * Why not `pg_notify` inside the append: PostgreSQL serialises every committing transaction that notified, database
 * wide, across its commit record's flush (the notification queue lock), so with NOTIFY in each append concurrent runs
 * commit one at a time — measured here 6–8× fewer commits per second at 20 connections. Out here at most one such
 * transaction per process is in flight, and the appends commit in parallel. A notification is only a wake-up: one
 * lost with a crash between the append and the announcement costs a reader the log poll's latency, never data.
 */
/** How long announcements gather before one statement sends them: the added wake-up latency across replicas. */
export const NOTIFY_WINDOW_MS = 5

export class PgNotifier {
  readonly #pool: pg.Pool
  readonly #channel: string
  #pending = new Map<string, number>()
  #flushing = false
  #closed = false

  constructor(pool: pg.Pool, channel: string) {
    this.#pool = pool
    this.#channel = channel
  }

  /** `threadId`'s log head is now `seq` (committed). */
  announce(threadId: string, seq: number): void {
    if (this.#closed) return
    if (seq > (this.#pending.get(threadId) ?? 0)) this.#pending.set(threadId, seq)
    if (!this.#flushing) {
      this.#flushing = true
      // Appends that commit within a few milliseconds share the statement (a streaming run appends every few ms).
      setTimeout(() => void this.#flush(), NOTIFY_WINDOW_MS)
    }
  }

  close(): void {
    this.#closed = true
    this.#pending.clear()
  }

  async #flush(): Promise<void> {
    while (this.#pending.size > 0 && !this.#closed) {
      const heads = this.#pending
      this.#pending = new Map()
      const payloads = [...heads].map(([threadId, seq]) => JSON.stringify(['e', threadId, seq]))
      // A failed announcement is dropped: readers elsewhere catch up with the log poll.
      await this.#pool.query(notifyAll(this.#channel, payloads)).catch(() => undefined)
    }
    this.#flushing = false
  }
}

/**
 * One transaction, one NOTIFY per payload (each ≤ 8000 bytes: a thread id is at most a few hundred). It writes no
 * data, so its commit need not wait for a WAL flush (`synchronous_commit` off for this transaction only — every write
 * that carries data, a decision above all, keeps it on): a notification lost with a database crash is a missed
 * wake-up, which the log poll covers.
 */
const notifyAll = (channel: string, payloads: readonly string[]) =>
  statement(
    `SELECT set_config('synchronous_commit', 'off', true), count(pg_notify($1, p)) FROM unnest($2::text[]) AS p`,
    [channel, payloads],
  )
