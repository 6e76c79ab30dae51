import type pg from 'pg'
import type { PoolConfig } from 'pg'
import { bigintAsNumber, withDefaultUser } from './connection.ts'
import type { PostgresStoreOptions } from './options.ts'
import { pgModule } from './pg-module.ts'
import { DEFAULT_TAKE_CONCURRENCY } from './grant-takes.ts'

/** The PostgreSQL store's pools: run work, admission, and grant takes, each on its own (docs/decisions.md#stores). */
export interface PgPools {
  /** The run pool's settings, also those of the change feed's connection. */
  readonly config: PoolConfig
  readonly pool: pg.Pool
  /** Admission only: latency-critical, never behind run traffic. */
  readonly admission: pg.Pool
  /**
   * Bounded grants' takes only (`grant-takes.ts`): generic plans, and commits that do not wait for their WAL flush —
   * the run's next write, which always comes before the approved call runs, flushes it (docs/decisions.md#bounded-grants).
   */
  readonly takes: pg.Pool
}

/** Creates the pools on `schema` (a plain identifier, else a `RangeError` and no pool); connects nothing yet. */
export function createPools(options: PostgresStoreOptions, schema: string): PgPools {
  const config: PoolConfig = {
    ...(options.pool as PoolConfig | undefined),
    connectionString: withDefaultUser(options.connectionString),
    max: options.max ?? 20,
    types: bigintAsNumber,
    options: `-c search_path=${schema.replace(/[^\w$]/g, '')}`,
  }
  if (!/^[A-Za-z_][\w$]{0,62}$/.test(schema)) {
    throw new RangeError('The PostgreSQL schema name must be a plain identifier (letters, digits, _ and $).')
  }
  const { Pool } = pgModule()
  const pool = new Pool(config)
  // Kept warm: a burst of admissions must not pay for new connections (a backend fork each). Generic plans: its
  // statements are key lookups whose plan never depends on the values, and PostgreSQL's custom plans (its default
  // for the first five runs of a prepared statement on each connection) cost 1–4 ms of planning per claim group
  // (bench/README.md, "Admission turns").
  const admission = new Pool({
    ...config,
    max: options.admissionMax ?? 10,
    idleTimeoutMillis: 0,
    options: `${config.options} -c plan_cache_mode=force_generic_plan`,
  })
  const takes = new Pool({
    ...config,
    max: options.takeConcurrency ?? DEFAULT_TAKE_CONCURRENCY,
    idleTimeoutMillis: 0,
    options: `${config.options} -c plan_cache_mode=force_generic_plan -c synchronous_commit=off`,
  })
  // An idle client that loses its connection must not crash the process; the next query reconnects.
  for (const p of [pool, admission, takes]) p.on('error', () => undefined)
  return { config, pool, admission, takes }
}

/** Opens the admission pool's connections up front. */
export async function warmAdmission(admission: pg.Pool, count: number): Promise<void> {
  const clients = await Promise.all(Array.from({ length: count }, () => admission.connect()))
  for (const client of clients) client.release()
}
