import fs from 'node:fs'
import path from 'node:path'
import Database from 'better-sqlite3'
import { afterAll, describe, expect, it } from 'vitest'
import { storeConformance } from '../../test-utils/store-conformance.ts'
import { firstRunRequest } from '../conformance/kit.ts'
import { tempDir } from '../../test-utils/harness.ts'
import { MIGRATIONS } from './migrations.ts'
import { createSqliteStore } from './sqlite-store.ts'
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

  it('refuses a database written by a newer server', () => {
    const file = path.join(tmp.dir, 'future.db')
    const db = new Database(file)
    db.pragma(`user_version = ${MIGRATIONS.length + 1}`)
    db.close()
    expect(() => createSqliteStore(file)).toThrow(/newer/)
  })
})
