import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { afterEach, describe, expect, it } from 'vitest'
import { InterludeError } from '@interlude/protocol'
import { createPostgresStore } from '../store/postgres/postgres-store.ts'
import type { PostgresStore } from '../store/postgres/postgres-store.ts'
import { createSqliteStore } from '../store/sqlite/sqlite-store.ts'
import { withTypedErrors } from '../store/store-errors.ts'
import type { Store } from '../store/store.ts'
import { until } from '../test-utils/child-server.ts'
import { newThreadId, runInput, tempDir, userMessage } from '../test-utils/harness.ts'
import { startInProcess } from '../test-utils/in-process.ts'
import type { InProcessServer } from '../test-utils/in-process.ts'
import { withDefaultUser } from '../store/postgres/connection.ts'
import { quoteIdent } from '../store/postgres/migrations.ts'
import { createTestSchema, PG_URL, pgAvailable, TEST_POOLS } from '../test-utils/pg.ts'

/** Store failures (docs/decisions.md#operating-it): a PostgreSQL store that fails answers 503 STORE_UNAVAILABLE (not 500 INTERNAL); ids with NUL are 400. */

const available = await pgAvailable('typed PostgreSQL store failures')

async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: withDefaultUser(PG_URL) })
  await client.connect()
  try {
    await client.query(sql)
  } finally {
    await client.end()
  }
}

let cleanup: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const step of cleanup.reverse()) await step().catch(() => undefined)
  cleanup = []
})

async function pgServer(): Promise<InProcessServer & { pgStore: PostgresStore }> {
  const { schema, drop } = await createTestSchema()
  cleanup.push(drop)
  const store = (await createPostgresStore({ connectionString: PG_URL, schema, ...TEST_POOLS })) as PostgresStore
  const server = await startInProcess({ store })
  cleanup.push(() => server.close())
  return Object.assign(server, { pgStore: store })
}

const newRun = (s: InProcessServer) => s.postRun(runInput(newThreadId(), [userMessage('hello')]))

describe.skipIf(!available)('PostgreSQL failures are typed', () => {
  it('stopped pools: 503 STORE_UNAVAILABLE with Retry-After, readiness 503 — never 500 INTERNAL', async () => {
    const s = await pgServer()
    expect((await newRun(s)).status).toBe(200)
    // Both pools (runs and admission) ended under the running server.
    await s.pgStore.close()
    const refused = await newRun(s)
    expect(refused.status).toBe(503)
    expect(refused.error?.code).toBe('STORE_UNAVAILABLE')
    expect(refused.headers.get('retry-after')).toBe('5')
    expect(refused.raw).not.toMatch(/pool|end/i)
    expect((await s.request('/health?ready', { principal: null })).status).toBe(503)
    expect((await s.request('/health', { principal: null })).status).toBe(503)
  })

  it('a revoked role: 503 while the grant is gone, then serves again (terminated sessions reconnect)', async () => {
    const role = `interlude_role_${randomBytes(5).toString('hex')}`
    const database = decodeURIComponent(new URL(withDefaultUser(PG_URL)).pathname.slice(1)) || 'postgres'
    await admin(`CREATE ROLE ${quoteIdent(role)} LOGIN`)
    await admin(`GRANT CREATE ON DATABASE ${quoteIdent(database)} TO ${quoteIdent(role)}`)
    cleanup.push(() => admin(`DROP OWNED BY ${quoteIdent(role)} CASCADE; DROP ROLE IF EXISTS ${quoteIdent(role)}`))
    const { schema, drop } = await createTestSchema()
    cleanup.push(drop)
    await admin(`GRANT ALL ON SCHEMA ${quoteIdent(schema)} TO ${quoteIdent(role)}`)
    const url = new URL(withDefaultUser(PG_URL))
    url.username = role
    const store = (await createPostgresStore({ connectionString: url.toString(), schema })) as PostgresStore
    const s = await startInProcess({ store })
    cleanup.push(() => s.close())
    expect((await newRun(s)).status).toBe(200)

    // Every backend of the role is killed (pg_terminate_backend), and it may no longer use the schema.
    await admin(`REVOKE ALL ON ALL TABLES IN SCHEMA ${quoteIdent(schema)} FROM ${quoteIdent(role)}`)
    await admin(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = '${role}'`)
    const refused = await newRun(s)
    expect(refused.status, JSON.stringify(s.logged.map((l) => String(l.error)))).toBe(503)
    expect(refused.error?.code).toBe('STORE_UNAVAILABLE')
    await until(async () => (await s.request('/health?ready', { principal: null })).status === 503, 'readiness 503')

    await admin(`GRANT ALL ON ALL TABLES IN SCHEMA ${quoteIdent(schema)} TO ${quoteIdent(role)}`)
    await until(async () => (await s.request('/health?ready', { principal: null })).status === 200, 'readiness 200')
    expect((await newRun(s)).status).toBe(200)
  })
})

describe('ids the protocol refuses are 400 INVALID_INPUT on every store', () => {
  const stores: [string, () => Promise<Store | undefined>][] = [
    ['sqlite', async () => createSqliteStore(tempDir().dbPath)],
    [
      'postgres',
      async () => {
        if (!available) return undefined
        const { schema, drop } = await createTestSchema()
        cleanup.push(drop)
        return createPostgresStore({ connectionString: PG_URL, schema, ...TEST_POOLS })
      },
    ],
  ]
  for (const [kind, open] of stores) {
    it(`${kind}: a NUL in a path id, a message id or an interrupt id`, async () => {
      const store = await open()
      if (store === undefined) return
      const s = await startInProcess({ store })
      cleanup.push(() => s.close())
      for (const path of [
        '/threads/a%00b',
        '/threads/a%00b/events',
        '/threads/t1/runs/r%00/cancel',
        '/threads/a%0Ab',
      ]) {
        const res = await s.request(
          path,
          path.endsWith('cancel')
            ? { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' }
            : {},
        )
        expect(res.status, path).toBe(400)
        expect(((await res.json()) as { error: { code: string } }).error.code).toBe('INVALID_INPUT')
      }
      const threadId = newThreadId()
      const badMessage = await s.postRun(runInput(threadId, [userMessage('hi', 'm\u00001')]))
      expect(badMessage.status).toBe(400)
      expect(badMessage.error?.code).toBe('INVALID_INPUT')
      const badEntry = await s.postRun(
        runInput(threadId, [], { resume: [{ interruptId: 'i\u0000', status: 'cancelled' }] }),
      )
      expect(badEntry.status).toBe(400)
      expect(badEntry.error?.code).toBe('INVALID_INPUT')
      // Nothing was created by either.
      expect(await store.getThread(threadId)).toBeUndefined()
    })
  }

  it.skipIf(!available)(
    'the store itself types what PostgreSQL refuses (a NUL that got past the boundary)',
    async () => {
      const { schema, drop } = await createTestSchema()
      cleanup.push(drop)
      const store = withTypedErrors(await createPostgresStore({ connectionString: PG_URL, schema, ...TEST_POOLS }))
      cleanup.push(() => store.close())
      const error: unknown = await store.getThread('a\u0000b').catch((e: unknown) => e)
      expect(InterludeError.isInstance(error) && error.code).toBe('INVALID_INPUT')
    },
  )
})
