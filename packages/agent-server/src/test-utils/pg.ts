import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { quoteIdent } from '../store/postgres/migrations.ts'
import { withDefaultUser } from '../store/postgres/connection.ts'

/** The test database (docs/quality.md): `INTERLUDE_TEST_PG_URL`, default `postgres://127.0.0.1:5432/postgres`. */
export const PG_URL = process.env.INTERLUDE_TEST_PG_URL ?? 'postgres://127.0.0.1:5432/postgres'

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
