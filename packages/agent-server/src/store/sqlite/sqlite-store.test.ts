import fs from 'node:fs'
import path from 'node:path'
import Database from 'better-sqlite3'
import { afterAll, describe, expect, it } from 'vitest'
import { storeConformance } from '../../test-utils/store-conformance.ts'
import { firstRunRequest } from '../conformance/kit.ts'
import { LEGACY_MIGRATIONS } from '../conformance/legacy-migrations.ts'
import { threadKey } from '../thread-key.ts'
import { tempDir } from '../../test-utils/harness.ts'
import { MIGRATIONS, SQLITE_MIGRATIONS } from './migrations.ts'
import { migrationSteps } from '../migration-steps.ts'
import { createSqliteStore, SqliteStore } from './sqlite-store.ts'
import { prepareStatements } from './statements.ts'
import type { Store } from '../store.ts'

const tmp = tempDir()
afterAll(() => tmp.cleanup())

let counter = 0
storeConformance('SQLite', async () => {
  const file = path.join(tmp.dir, `conformance-${++counter}.db`)
  const store = createSqliteStore(file)
  const others: Store[] = []
  return {
    store,
    // A second connection to the same file (like a second server process).
    connect: async () => {
      const other = createSqliteStore(file)
      others.push(other)
      return other
    },
    dispose: async () => {
      for (const s of [store, ...others]) await s.close()
    },
  }
})

describe('SQLite store', () => {
  it('creates the file and its directory on first start, in WAL mode, at the latest schema version', async () => {
    const file = path.join(tmp.dir, 'nested', 'dir', 'agent.db')
    const store = createSqliteStore(file)
    await store.close()
    expect(fs.existsSync(file)).toBe(true)
    const db = new Database(file, { readonly: true })
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal')
    expect(db.pragma('user_version', { simple: true })).toBe(MIGRATIONS.length)
    db.close()
    // Re-opening an up-to-date file migrates nothing and keeps the data.
    const again = createSqliteStore(file)
    await again.getOrCreateSetting('x', () => '1')
    await again.close()
    const third = createSqliteStore(file)
    expect(await third.getOrCreateSetting('x', () => '2')).toBe('1')
    await third.close()
  })

  it('stamps the writes that carry no time of their own with its clock', async () => {
    const store = createSqliteStore(path.join(tmp.dir, 'clock.db'), { now: () => 1_234 })
    await store.startInputRun(firstRunRequest('t', 'r', 1))
    expect((await store.getThread('t'))!.updatedAt).toBe(1)
    await store.appendMessages('t', 'r', [{ id: 'm', role: 'user', content: 'x' }])
    expect((await store.getThread('t'))!.updatedAt).toBe(1_234)
    await store.close()
  })

  it('a file at any earlier schema version (the SQL it ran, its user_version) migrates to the schema of a new file', async () => {
    const schemaOf = (file: string) => {
      const db = new Database(file, { readonly: true })
      try {
        const objects = db.prepare('SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name').all()
        return { version: db.pragma('user_version', { simple: true }), objects }
      } finally {
        db.close()
      }
    }
    const fresh = path.join(tmp.dir, 'fresh-schema.db')
    await createSqliteStore(fresh).close()
    const want = schemaOf(fresh)
    expect(want.version).toBe(MIGRATIONS.length)
    for (let version = 0; version < MIGRATIONS.length; version++) {
      const file = path.join(tmp.dir, `at-version-${version}.db`)
      const db = new Database(file)
      for (const sql of MIGRATIONS.slice(0, version)) db.exec(sql)
      db.pragma(`user_version = ${version}`)
      db.close()
      await createSqliteStore(file).close()
      expect(schemaOf(file), `from user_version ${version}`).toEqual(want)
    }
  })

  it('0003-approvals-from-anywhere gives batches that existed before it the keep policy, and threads no title', async () => {
    const file = path.join(tmp.dir, 'version-2.db')
    const db = new Database(file)
    for (const sql of MIGRATIONS.slice(0, 2)) db.exec(sql)
    db.pragma('user_version = 2')
    db.exec(`INSERT INTO threads (thread_id, owner_id, revision, status, state_json, last_seq, created_at, updated_at)
             VALUES ('t', 'alice', 3, 'interrupted', '{}', 0, 1, 1)`)
    db.exec(`INSERT INTO interrupt_batches (batch_id, thread_id, run_id, status, created_at, expires_at)
             VALUES ('b', 't', 'r', 'pending', 1, 2)`)
    db.close()
    const store = createSqliteStore(file)
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
      const file = path.join(tmp.dir, `before-${id}.db`)
      const db = new Database(file)
      const before = migrationSteps(SQLITE_MIGRATIONS).findIndex((s) => s.ids.includes(id))
      for (const sql of MIGRATIONS.slice(0, before)) db.exec(sql)
      db.pragma(`user_version = ${before}`)
      for (const sql of rows) db.exec(sql)
      db.close()
      const store = createSqliteStore(file)
      await expectMigrated(store)
      await store.close()
    })
  }

  it('serves the expiry sweep and the inbox from the partial indexes on open batches, not a scan', async () => {
    const store = new SqliteStore(path.join(tmp.dir, 'plans.db'))
    const db = store.database
    const s = prepareStatements(db as unknown as Database.Database) as unknown as Record<string, Database.Statement>
    const plan = (name: string, params: object) =>
      (db.prepare(`EXPLAIN QUERY PLAN ${s[name]!.source}`).all(params) as { detail: string }[])
        .map((row) => row.detail)
        .join('\n')
    const due = plan('listDueBatches', { now: 1, limit: 10 })
    expect(due).toMatch(/SEARCH b USING INDEX pending_batches_by_deadline \(expires_at<\?\)/)
    expect(due).not.toMatch(/SCAN b\b/)
    const page = { beforeCreated: 1, beforeBatch: 'b', limit: 10, owner: null }
    expect(plan('listPendingBatches', page)).toMatch(/(SCAN|SEARCH) b USING INDEX pending_batches_by_age/)
    await store.close()
  })

  it('refuses a database written by a newer server', () => {
    const file = path.join(tmp.dir, 'future.db')
    const db = new Database(file)
    db.pragma(`user_version = ${MIGRATIONS.length + 1}`)
    db.close()
    expect(() => createSqliteStore(file)).toThrow(/newer/)
  })
})
