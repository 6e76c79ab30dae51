import type { Clock } from '../../clock.ts'

/**
 * Extra settings of the `pg` pools (passed through as they are). Typed here, not with `pg`'s own
 * `PoolConfig`, so that the public types need neither `pg` nor `@types/pg` (docs/decisions.md).
 */
export interface PostgresPoolSettings {
  readonly ssl?: boolean | Readonly<Record<string, unknown>>
  readonly idleTimeoutMillis?: number
  readonly connectionTimeoutMillis?: number
  readonly statement_timeout?: number
  readonly query_timeout?: number
  readonly application_name?: string
  readonly keepAlive?: boolean
  readonly [setting: string]: unknown
}

/** What `PostgresStore.pool` exposes (tests and tooling): `pg`'s `Pool`, typed without `@types/pg`. */
export interface PostgresPool {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- rows are whatever the SQL selects, as in pg
  query<R extends Record<string, any> = Record<string, any>>(
    text: string,
    values?: readonly unknown[],
  ): Promise<{ readonly rows: R[] }>
}

/** Where the tables live unless `schema` says otherwise (docs/decisions.md#postgresql-schema). */
export const DEFAULT_SCHEMA = 'interlude'

export interface PostgresStoreOptions {
  /** `postgres://user:password@host:port/database`; a URL without a user connects as the OS user. */
  readonly connectionString: string
  /**
   * Tables live in this schema, created on first start. Its own schema by default, so that a
   * database that already has tables such as `messages` in `public` is left alone. @default 'interlude'
   */
  readonly schema?: string
  /** Size of the pool for run work (events, tool calls, messages, reads). @default 20 */
  readonly max?: number
  /**
   * Size of a separate pool for admission (`getAdmissionView`, `claimBatch`, `startInputRun`,
   * `getBatchOfInterrupt`), so admissions never queue behind the writes of running runs. @default 10
   */
  readonly admissionMax?: number
  /**
   * Resume claims in flight at once on the admission pool; claims that arrive meanwhile are committed together, one
   * statement for up to 64 (`claim-groups.ts`). @default 4
   */
  readonly claimConcurrency?: number
  /**
   * Bounded grants' take statements in flight at once, each on a connection of the takes' own pool (that many
   * connections, opened at start); takes released in one event loop turn, or arriving while these are in flight, are
   * committed together, one statement for up to 64 (`grant-takes.ts`). @default 2
   */
  readonly takeConcurrency?: number
  /** Extra pg pool settings (ssl, timeouts…); `connectionString`, `max` and `options` are set by the store. */
  readonly pool?: PostgresPoolSettings
  /** Clock of the timestamps the store writes itself (methods given a `now` use that). @default systemClock */
  readonly now?: Clock
}
