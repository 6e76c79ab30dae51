import { afterAll, describe, expect, it } from 'vitest'
import pg from 'pg'
import type { Store, StoreChange } from '../store.ts'
import { createTestSchema, PG_URL, pgAvailable } from '../../test-utils/pg.ts'
import { storeConformance } from '../../test-utils/store-conformance.ts'
import { firstRunRequest } from '../conformance/kit.ts'
import { PG_MIGRATIONS } from './migrations.ts'
import { channelFor, withDefaultUser } from './connection.ts'
import { createPostgresStore, PostgresStore } from './postgres-store.ts'

const available = await pgAvailable('PostgreSQL store tests')

if (available) {
  // Every conformance test gets its own schema, dropped afterwards.
  storeConformance('PostgreSQL', async () => {
    const { schema, drop } = await createTestSchema()
    const open = () => createPostgresStore({ connectionString: PG_URL, schema, max: 4 })
    const store = await open()
    const others: Store[] = []
    return {
      store,
      connect: async () => {
        const other = await open()
        others.push(other)
        return other
      },
      dispose: async () => {
        for (const s of [store, ...others]) await s.close()
        await drop()
      },
    }
  })
}

describe.skipIf(!available)('PostgreSQL store', () => {
  const drops: (() => Promise<void>)[] = []
  afterAll(async () => {
    for (const drop of drops) await drop()
  })

  it('creates its schema and tables on first start, versioned in schema_migrations; reopening migrates nothing', async () => {
    const { schema, drop } = await createTestSchema()
    drops.push(drop)
    // Two replicas starting at once: the advisory lock lets one migrate.
    const [a, b] = await Promise.all([
      PostgresStore.open({ connectionString: PG_URL, schema: `${schema}_new`, max: 2 }),
      PostgresStore.open({ connectionString: PG_URL, schema: `${schema}_new`, max: 2 }),
    ])
    drops.push(async () => {
      const client = new pg.Client({ connectionString: withDefaultUser(PG_URL) })
      await client.connect()
      await client.query(`DROP SCHEMA IF EXISTS "${schema}_new" CASCADE`)
      await client.end()
    })
    const versions = await a.pool.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version')
    expect(versions.rows.map((r) => r.version)).toEqual(PG_MIGRATIONS.map((_, i) => i + 1))
    await a.getOrCreateSetting('x', () => '1')
    await a.close()
    await b.close()
    const again = await PostgresStore.open({ connectionString: PG_URL, schema: `${schema}_new`, max: 2 })
    expect(await again.getOrCreateSetting('x', () => '2')).toBe('1')
    await again.close()
  })

  it('refuses a database written by a newer server', async () => {
    const { schema, drop } = await createTestSchema()
    drops.push(drop)
    const store = await PostgresStore.open({ connectionString: PG_URL, schema, max: 1 })
    await store.pool.query('INSERT INTO schema_migrations (version, applied_at) VALUES ($1, 0)', [
      PG_MIGRATIONS.length + 1,
    ])
    await store.close()
    await expect(PostgresStore.open({ connectionString: PG_URL, schema, max: 1 })).rejects.toThrow(/newer/)
  })

  it('notifies appended events and cancel requests to every watcher of the schema (LISTEN/NOTIFY)', async () => {
    const { schema, drop } = await createTestSchema()
    drops.push(drop)
    const writer = await PostgresStore.open({ connectionString: PG_URL, schema, max: 2 })
    const reader = await PostgresStore.open({ connectionString: PG_URL, schema, max: 2 })
    const changes: StoreChange[] = []
    const unsubscribe = reader.watch((change) => changes.push(change))
    // The feed connects in the background: wait until a probe notification arrives.
    const probe = async () => {
      await reader.pool.query('SELECT pg_notify($1, $2)', [channelFor(schema), JSON.stringify(['e', 'probe', 0])])
      return changes.some((c) => c.threadId === 'probe')
    }
    const deadline = Date.now() + 10_000
    while (!(await probe())) {
      if (Date.now() > deadline) throw new Error('LISTEN never became active')
      await new Promise((r) => setTimeout(r, 20))
    }
    const now = Date.now()
    await writer.startInputRun(firstRunRequest('th', 'r1', now))
    await writer.appendEvents('th', 'r1', [
      { type: 'A', json: '{}' },
      { type: 'B', json: '{}' },
    ])
    await writer.requestCancel('th', 'r1', now)
    const until = Date.now() + 10_000
    while (changes.filter((c) => c.threadId === 'th').length < 2 && Date.now() < until)
      await new Promise((r) => setTimeout(r, 10))
    expect(changes.filter((c) => c.threadId === 'th')).toEqual([
      { kind: 'events', threadId: 'th', seq: 2 },
      { kind: 'cancel', threadId: 'th', runId: 'r1' },
    ])
    unsubscribe()
    await writer.close()
    await reader.close()
  })

  it('stamps the writes that carry no time of their own with its clock', async () => {
    const { schema, drop } = await createTestSchema()
    drops.push(drop)
    const store = await createPostgresStore({ connectionString: PG_URL, schema, max: 1, now: () => 1_234 })
    await store.startInputRun(firstRunRequest('t', 'r', 1))
    expect((await store.getThread('t'))!.updatedAt).toBe(1)
    await store.setState('t', { n: 1 })
    expect((await store.getThread('t'))!.updatedAt).toBe(1_234)
    await store.close()
  })

  it('connects as the OS user when the URL names none', () => {
    expect(withDefaultUser('postgres://127.0.0.1:5432/postgres')).toMatch(
      /^postgres:\/\/[^@/]+@127\.0\.0\.1:5432\/postgres$/,
    )
    expect(withDefaultUser('postgres://bob:pw@db/x')).toBe('postgres://bob:pw@db/x')
  })
})
