import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { quoteIdent } from '../store/postgres/migrations.ts'
import { withDefaultUser } from '../store/postgres/connection.ts'
import type { PostgresStore } from '../store/postgres/postgres-store.ts'
import type { Queryable } from '../store/postgres/query.ts'
import type { Store } from '../store/store.ts'

/** The test database (docs/quality.md): `INTERLUDE_TEST_PG_URL`, default `postgres://127.0.0.1:5432/postgres`. */
export const PG_URL = process.env.INTERLUDE_TEST_PG_URL ?? 'postgres://127.0.0.1:5432/postgres'

/**
 * Pool sizes for a test's PostgreSQL stores: a replica test holds several stores at once, and with the defaults (up to
 * 20 + 10 connections each) one file could come near the database's 100 connections. Pools only queue when full.
 */
export const TEST_POOLS = { max: 6, admissionMax: 4 } as const

/** `TEST_POOLS` as the CLI's flags, for replicas started as child processes. */
export const TEST_POOL_ARGS = ['--db-pool', '6', '--db-admission-pool', '4'] as const

let reachable: Promise<boolean> | undefined

/**
 * Whether PostgreSQL answers. Unreachable: with `CI=true` this throws (the suite fails); elsewhere
 * it prints a loud skip notice and the PostgreSQL tests are skipped.
 */
export async function pgAvailable(suite: string): Promise<boolean> {
  reachable ??= (async () => {
    const client = new pg.Client({ connectionString: withDefaultUser(PG_URL), connectionTimeoutMillis: 3000 })
    try {
      await client.connect()
      await client.query('SELECT 1')
      return true
    } catch (error) {
      if (process.env.CI === 'true' || process.env.CI === '1') {
        throw new Error(`PostgreSQL at ${PG_URL} is unreachable (CI=true): ${(error as Error).message}`)
      }
      return false
    } finally {
      await client.end().catch(() => undefined)
    }
  })()
  const ok = await reachable
  if (!ok) {
    const line = '!'.repeat(100)
    console.warn(
      `\n${line}\n!!! SKIPPED: ${suite} — PostgreSQL is unreachable at ${PG_URL} (set INTERLUDE_TEST_PG_URL; in CI this fails)\n${line}\n`,
    )
  }
  return ok
}

/** A uniquely named schema (`interlude_test_<random>`) for one test run; `drop()` removes it. */
export async function createTestSchema(): Promise<{ schema: string; drop(): Promise<void> }> {
  const schema = `interlude_test_${randomBytes(6).toString('hex')}`
  await admin(`CREATE SCHEMA ${quoteIdent(schema)}`)
  return { schema, drop: () => admin(`DROP SCHEMA IF EXISTS ${quoteIdent(schema)} CASCADE`) }
}

async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: withDefaultUser(PG_URL) })
  await client.connect()
  try {
    await client.query(sql)
  } finally {
    await client.end()
  }
}

/**
 * The store's own pool, counting the statements sent through it — `group` for a group commit's statement (its
 * requests unnested `WITH ORDINALITY`), else `one` — for tests of `group-commit.ts`'s users; `failGroup` makes the
 * next group statement fail with that error instead of reaching the database.
 */
export function countingPool(store: Store) {
  const pool = (store as PostgresStore).pool as unknown as Queryable
  const sent: string[] = []
  const faults: unknown[] = []
  const q: Queryable = {
    query: ((config: { text: string }) => {
      const group = config.text.includes('WITH ORDINALITY AS r(')
      sent.push(group ? 'group' : 'one')
      if (group && faults.length > 0) return Promise.reject(faults.shift())
      return (pool.query as (c: unknown) => unknown)(config)
    }) as Queryable['query'],
  }
  return { q, sent, failGroup: (error: unknown) => faults.push(error) }
}
