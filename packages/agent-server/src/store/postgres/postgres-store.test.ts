import { afterAll, describe, expect, it } from 'vitest'
import pg from 'pg'
import type { Store, StoreChange } from '../store.ts'
import { createTestSchema, PG_URL, pgAvailable } from '../../test-utils/pg.ts'
import { storeConformance } from '../../test-utils/store-conformance.ts'
import { firstRunRequest } from '../conformance/kit.ts'
import { LEGACY_MIGRATIONS } from '../conformance/legacy-migrations.ts'
import { threadKey } from '../thread-key.ts'
import { PG_MIGRATIONS, POSTGRES_MIGRATIONS } from './migrations.ts'
import { migrationSteps } from '../migration-steps.ts'
import { listDueBatches, listPendingBatches } from './approval-statements.ts'
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

  it("uses its own schema 'interlude' by default, beside an app's own public.messages table", async () => {
    // A fresh database (the default schema is fixed, so it must not be shared with other test runs).
    const database = `interlude_test_db_${process.pid}_${Date.now()}`
    const admin = new pg.Client({ connectionString: withDefaultUser(PG_URL) })
    await admin.connect()
    await admin.query(`CREATE DATABASE "${database}"`)
    const url = new URL(withDefaultUser(PG_URL))
    url.pathname = `/${database}`
    try {
      const app = new pg.Client({ connectionString: url.toString() })
      await app.connect()
      await app.query('CREATE TABLE public.messages (id SERIAL PRIMARY KEY, body TEXT NOT NULL)')
      await app.query("INSERT INTO public.messages (body) VALUES ('the app''s own row')")
      const store = await PostgresStore.open({ connectionString: url.toString(), max: 2 })
      expect(store.schema).toBe('interlude')
      const threadId = 'thread-in-own-schema'
      await store.startInputRun(firstRunRequest(threadId, 'run-1', Date.now()))
      expect((await store.getThread(threadId))?.threadId).toBe(threadId)
      await store.close()
      const tables = await app.query<{ table_schema: string }>(
        "SELECT table_schema FROM information_schema.tables WHERE table_name = 'messages' ORDER BY table_schema",
      )
      expect(tables.rows.map((r) => r.table_schema)).toEqual(['interlude', 'public'])
      expect((await app.query('SELECT body FROM public.messages')).rows).toEqual([{ body: "the app's own row" }])
      // Reopening finds the schema it created; an explicit schema still overrides the default.
      const again = await PostgresStore.open({ connectionString: url.toString(), max: 1 })
      expect((await again.getThread(threadId))?.threadId).toBe(threadId)
      await again.close()
      const other = await PostgresStore.open({ connectionString: url.toString(), schema: 'elsewhere', max: 1 })
      expect(await other.getThread(threadId)).toBeUndefined()
      await other.close()
      await app.end()
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`)
      await admin.end()
    }
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

  it("announces each thread's log head after the commit, appends of one tick sharing one NOTIFY statement", async () => {
    const { schema, drop } = await createTestSchema()
    drops.push(drop)
    const writer = await PostgresStore.open({ connectionString: PG_URL, schema, max: 4 })
    const reader = await PostgresStore.open({ connectionString: PG_URL, schema, max: 2 })
    const changes: StoreChange[] = []
    const unsubscribe = reader.watch((change) => changes.push(change))
    const deadline = Date.now() + 10_000
    for (;;) {
      await reader.pool.query('SELECT pg_notify($1, $2)', [channelFor(schema), JSON.stringify(['e', 'probe', 0])])
      await new Promise((r) => setTimeout(r, 20))
      if (changes.some((c) => c.threadId === 'probe')) break
      if (Date.now() > deadline) throw new Error('LISTEN never became active')
    }
    const now = Date.now()
    for (const t of ['ta', 'tb']) await writer.startInputRun(firstRunRequest(t, 'r1', now))
    const one = [{ type: 'A', json: '{}' }]
    // Three appends to ta in a row and one to tb beside them.
    await Promise.all([
      (async () => {
        for (let i = 0; i < 3; i++) await writer.appendEvents('ta', 'r1', one)
      })(),
      writer.appendEvents('tb', 'r1', [...one, ...one]),
    ])
    const head = (t: string) =>
      Math.max(0, ...changes.flatMap((c) => (c.kind === 'events' && c.threadId === t ? [c.seq] : [])))
    const until = Date.now() + 10_000
    while ((head('ta') < 3 || head('tb') < 2) && Date.now() < until) await new Promise((r) => setTimeout(r, 10))
    expect([head('ta'), head('tb')]).toEqual([3, 2])
    // Never more announcements than appends.
    const announced = changes.filter((c) => c.kind === 'events' && c.threadId !== 'probe')
    expect(announced.length).toBeLessThanOrEqual(4)
    unsubscribe()
    await writer.close()
    await reader.close()
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
    // The events' head is announced after their commit, coalesced (notifier.ts): it may come after the cancel.
    const seen = changes.filter((c) => c.threadId === 'th')
    expect(seen).toHaveLength(2)
    expect(seen).toEqual(
      expect.arrayContaining([
        { kind: 'events', threadId: 'th', seq: 2 },
        { kind: 'cancel', threadId: 'th', runId: 'r1' },
      ]),
    )
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

  it('a database at any earlier schema version (the SQL it ran, its schema_migrations rows) migrates to the schema of a new one', async () => {
    const schemaOf = async (schema: string) => {
      const client = new pg.Client({ connectionString: withDefaultUser(PG_URL) })
      await client.connect()
      try {
        const read = async (text: string) => (await client.query(text, [schema])).rows
        const shape = {
          columns: await read(`SELECT table_name, column_name, ordinal_position, data_type, is_nullable, column_default
                                 FROM information_schema.columns WHERE table_schema = $1
                                 ORDER BY table_name, ordinal_position`),
          indexes: await read('SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = $1 ORDER BY indexname'),
          constraints: await read(`SELECT c.conname, pg_get_constraintdef(c.oid) AS def FROM pg_constraint c
                                     JOIN pg_namespace n ON n.oid = c.connamespace WHERE n.nspname = $1
                                     ORDER BY c.conrelid::regclass::text, c.conname`),
          functions: await read(`SELECT p.proname, pg_get_functiondef(p.oid) AS def FROM pg_proc p
                                   JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = $1
                                   ORDER BY p.proname`),
          versions: (await client.query(`SELECT version FROM ${schema}.schema_migrations ORDER BY version`)).rows,
        }
        return JSON.parse(JSON.stringify(shape).replaceAll(schema, '<schema>')) as unknown
      } finally {
        await client.end()
      }
    }
    const open = (schema: string) => PostgresStore.open({ connectionString: PG_URL, schema, max: 1, admissionMax: 1 })
    const fresh = await createTestSchema()
    drops.push(fresh.drop)
    await (await open(fresh.schema)).close()
    const want = await schemaOf(fresh.schema)
    expect((want as { versions: unknown[] }).versions).toEqual(PG_MIGRATIONS.map((_, i) => ({ version: i + 1 })))
    expect((want as { functions: { proname: string }[] }).functions.map((f) => f.proname)).toEqual(['grant_free_slots'])
    for (let version = 0; version < PG_MIGRATIONS.length; version++) {
      const { schema, drop } = await createTestSchema()
      drops.push(drop)
      const client = new pg.Client({ connectionString: withDefaultUser(PG_URL), options: `-c search_path=${schema}` })
      await client.connect()
      await client.query('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at BIGINT NOT NULL)')
      for (const [i, sql] of PG_MIGRATIONS.slice(0, version).entries()) {
        await client.query(sql)
        await client.query('INSERT INTO schema_migrations VALUES ($1, 0)', [i + 1])
      }
      await client.end()
      await (await open(schema)).close()
      expect(await schemaOf(schema), `from version ${version}`).toEqual(want)
    }
  })

  it('0003-approvals-from-anywhere (version 2 here) gives batches that existed before it the keep policy, and threads no title', async () => {
    const { schema, drop } = await createTestSchema()
    drops.push(drop)
    const client = new pg.Client({ connectionString: withDefaultUser(PG_URL), options: `-c search_path=${schema}` })
    await client.connect()
    await client.query('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at BIGINT NOT NULL)')
    await client.query(PG_MIGRATIONS[0]!)
    await client.query('INSERT INTO schema_migrations VALUES (1, 0)')
    await client.query(`INSERT INTO threads (thread_id, owner_id, revision, status, state_json, last_seq, created_at, updated_at)
                        VALUES ('t', 'alice', 3, 'interrupted', '{}', 0, 1, 1)`)
    await client.query(`INSERT INTO interrupt_batches (batch_id, thread_id, run_id, status, created_at, expires_at)
                        VALUES ('b', 't', 'r', 'pending', 1, 2)`)
    await client.end()
    const store = await createPostgresStore({ connectionString: PG_URL, schema, max: 1 })
    // The thread is alice's `t` since the per-owner keys (0009-thread-keys-per-owner).
    const key = threadKey('alice', 't')
    expect(await store.getThread(key)).toMatchObject({ title: undefined, revision: 3 })
    expect(await store.getOpenBatch(key)).toMatchObject({ batchId: 'b', onExpiry: 'keep' })
    // Kept batches are never due, however late it is.
    expect(await store.listDueBatches({ now: 10, limit: 10 })).toEqual([])
    await store.close()
  })

  for (const { test, id, rows, expectMigrated } of LEGACY_MIGRATIONS) {
    it(test, async () => {
      const { schema, drop } = await createTestSchema()
      drops.push(drop)
      const client = new pg.Client({ connectionString: withDefaultUser(PG_URL), options: `-c search_path=${schema}` })
      await client.connect()
      await client.query('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at BIGINT NOT NULL)')
      const before = migrationSteps(POSTGRES_MIGRATIONS).findIndex((s) => s.ids.includes(id))
      for (const [i, sql] of PG_MIGRATIONS.slice(0, before).entries()) {
        await client.query(sql)
        await client.query('INSERT INTO schema_migrations VALUES ($1, 0)', [i + 1])
      }
      for (const sql of rows) await client.query(sql)
      await client.end()
      const store = await createPostgresStore({ connectionString: PG_URL, schema, max: 1 })
      await expectMigrated(store)
      await store.close()
    })
  }

  it('serves the expiry sweep and the inbox from the partial indexes on open batches, not a scan', async () => {
    const { schema, drop } = await createTestSchema()
    drops.push(drop)
    const store = await PostgresStore.open({ connectionString: PG_URL, schema, max: 1 })
    // Many closed batches and fewer open ones, analysed: the planner picks on statistics.
    await store.pool
      .query(`INSERT INTO interrupt_batches (batch_id, thread_id, run_id, status, created_at, expires_at, on_expiry)
                            SELECT 'b' || n, 't' || n, 'r', CASE WHEN n % 5 = 0 THEN 'pending' ELSE 'resolved' END,
                                   n, n + 1000, 'deny'
                            FROM generate_series(1, 20000) AS n`)
    await store.pool
      .query(`INSERT INTO threads (thread_id, owner_id, revision, status, state_json, created_at, updated_at)
                            SELECT 't' || n, 'o' || (n % 7), 1, 'idle', '{}', n, n FROM generate_series(1, 20000) AS n`)
    await store.pool.query('ANALYZE interrupt_batches, threads')
    const plan = async (query: { text: string; values?: unknown[] }) =>
      (await store.pool.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${query.text}`, query.values)).rows
        .map((row) => row['QUERY PLAN'])
        .join('\n')
    const due = await plan(listDueBatches({ now: 5000, limit: 10 }))
    expect(due).toMatch(/Index Scan using pending_batches_by_deadline on interrupt_batches b/)
    expect(due).not.toMatch(/Seq Scan on interrupt_batches/)
    const inbox = await plan(listPendingBatches({ limit: 10, before: { createdAt: 9000, batchId: 'b9000' } }))
    expect(inbox).toMatch(/Index Scan Backward using pending_batches_by_age on interrupt_batches b/)
    expect(inbox).not.toMatch(/Seq Scan on interrupt_batches/)
    await store.close()
  })

  it('two replicas claiming the outbox concurrently get disjoint deliveries that cover all of them', async () => {
    const { schema, drop } = await createTestSchema()
    drops.push(drop)
    const a = await createPostgresStore({ connectionString: PG_URL, schema, max: 4 })
    const b = await createPostgresStore({ connectionString: PG_URL, schema, max: 4 })
    const now = 1_900_000_000_000
    await a.startInputRun(firstRunRequest('t', 'r', now))
    const outbox = Array.from({ length: 50 }, (_, i) => ({
      deliveryId: `d${i}`,
      endpoint: 'https://hooks.example/x',
      eventType: 'run.failed',
      payload: '{}',
    }))
    const finished = { status: 'failed', outcome: undefined, errorCode: 'RUN_FAILED', events: [] } as const
    await a.finishRun({ threadId: 't', runId: 'r', ...finished, closeBatch: undefined, now, outbox })
    // Four senders per replica, each claiming small pages until nothing is left.
    const sender = async (store: Store, executorId: string) => {
      const got: string[] = []
      for (;;) {
        const page = await store.claimOutbox({ executorId, now, lockUntil: now + 60_000, limit: 3 })
        if (page.length === 0) return got
        got.push(...page.map((d) => d.deliveryId))
      }
    }
    const senders = [a, b].flatMap((store, s) => [0, 1, 2, 3].map((i) => sender(store, `exec-${s}-${i}`)))
    const claimed = (await Promise.all(senders)).flat()
    expect(claimed).toHaveLength(50)
    expect(new Set(claimed)).toEqual(new Set(outbox.map((d) => d.deliveryId)))
    expect((await a.listOutbox()).every((d) => d.lockedBy !== undefined)).toBe(true)
    await a.close()
    await b.close()
  })

  it('connects as the OS user when the URL names none', () => {
    expect(withDefaultUser('postgres://127.0.0.1:5432/postgres')).toMatch(
      /^postgres:\/\/[^@/]+@127\.0\.0\.1:5432\/postgres$/,
    )
    expect(withDefaultUser('postgres://bob:pw@db/x')).toBe('postgres://bob:pw@db/x')
  })
})
