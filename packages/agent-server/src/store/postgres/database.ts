import type pg from 'pg'
import type { PoolClient, PoolConfig } from 'pg'
import type { Clock } from '../../clock.ts'
import type { StoreChange } from '../store.ts'
import { PgChangeFeed } from './change-feed.ts'
import { DEFAULT_TAKE_CONCURRENCY, TakeGroups } from './grant-takes.ts'
import { ClaimGroups, DEFAULT_CLAIM_CONCURRENCY } from './claim-groups.ts'
import { channelFor } from './connection.ts'
import { migratePostgres } from './migrate.ts'
import { PgNotifier } from './notifier.ts'
import { DEFAULT_SCHEMA } from './options.ts'
import type { PostgresStoreOptions } from './options.ts'
import { loadPg } from './pg-module.ts'
import { createPools, warmAdmission } from './pools.ts'
import { transaction } from './transaction.ts'

/**
 * The PostgreSQL store's hold on its database: the pools (`pools.ts`), the claim groups on the admission pool, the
 * grant takes on their own pool, NOTIFY of appended events (`notifier.ts`) and the LISTEN change feed, started on the
 * first `watch()`. Opened with the schema migrated (`migrate.ts`) and the admission and takes pools connected; closed
 * all together, once.
 */
export class PgDatabase {
  readonly schema: string
  /** The schema's NOTIFY channel. */
  readonly channel: string
  /** Run work: events, tool calls, messages, reads. */
  readonly pool: pg.Pool
  /** Admission only: latency-critical, never behind run traffic. */
  readonly admission: pg.Pool
  /** Claims that arrive together are committed together (`claim-groups.ts`). */
  readonly claims: ClaimGroups
  /** Grant takes released together are committed together (`grant-takes.ts`), on a pool of their own. */
  readonly takes: TakeGroups
  readonly #takesPool: pg.Pool
  /** NOTIFY of appended events, after their commit and coalesced (`notifier.ts`). */
  readonly notifier: PgNotifier
  readonly #config: PoolConfig
  #feed: PgChangeFeed | undefined
  #closed = false

  private constructor(options: PostgresStoreOptions) {
    const schema = options.schema ?? DEFAULT_SCHEMA
    this.schema = schema
    this.channel = channelFor(schema)
    const pools = createPools(options, schema)
    this.#config = pools.config
    this.pool = pools.pool
    this.admission = pools.admission
    this.notifier = new PgNotifier(this.pool, this.channel)
    this.claims = new ClaimGroups(this.admission, options.claimConcurrency ?? DEFAULT_CLAIM_CONCURRENCY)
    this.#takesPool = pools.takes
    this.takes = new TakeGroups(pools.takes, options.takeConcurrency ?? DEFAULT_TAKE_CONCURRENCY)
  }

  /** Connects, creates the schema on first start and applies migrations (`now` stamps them). */
  static async open(options: PostgresStoreOptions, now: Clock): Promise<PgDatabase> {
    await loadPg()
    const db = new PgDatabase(options)
    try {
      const client = await db.pool.connect()
      try {
        await migratePostgres(client, db.schema, now)
      } finally {
        client.release()
      }
      await warmAdmission(db.admission, options.admissionMax ?? 10)
      await warmAdmission(db.#takesPool, options.takeConcurrency ?? DEFAULT_TAKE_CONCURRENCY)
      return db
    } catch (error) {
      await db.close()
      throw error
    }
  }

  /** A short transaction on one connection of `pool` (`transaction.ts`). */
  tx<T>(fn: (q: PoolClient) => Promise<T>, pool: pg.Pool = this.pool): Promise<T> {
    return transaction(pool, fn)
  }

  watch(listener: (change: StoreChange) => void): () => void {
    this.#feed ??= new PgChangeFeed(this.#config, this.channel)
    return this.#feed.subscribe(listener)
  }

  async close(): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    this.notifier.close()
    await this.#feed?.close()
    await Promise.all([this.pool.end(), this.admission.end(), this.#takesPool.end()])
  }
}
