import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { SqliteStore } from './sqlite-store.ts'
import { loadSqlite } from './sqlite-module.ts'
import { BACKSTOP_PAGES, WalCheckpointer } from './wal-checkpointer.ts'

/**
 * WAL checkpoints in a worker thread (`wal-checkpointer.ts`): the store's own connection never checkpoints on the
 * request path below the backstop; the worker does once the WAL is large enough.
 */
const dirs: string[] = []
const tempFile = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'interlude-wal-'))
  dirs.push(dir)
  return path.join(dir, 'store.db')
}
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true })
})

const until = async (check: () => boolean, ms = 5_000) => {
  const end = Date.now() + ms
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out')
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

describe('WAL checkpoints in a worker thread', () => {
  it('copies the WAL into the database from its own thread once the WAL reaches the threshold', async () => {
    const file = tempFile()
    const Driver = loadSqlite()
    const db = new Driver(file)
    db.pragma('journal_mode = WAL')
    db.pragma('wal_autocheckpoint = 0') // this connection never checkpoints: what moves pages is the worker
    db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT)')
    const checkpointer = new WalCheckpointer(file, { intervalMs: 10, thresholdBytes: 256 * 1024 })
    try {
      const before = fs.statSync(file).size
      const insert = db.prepare('INSERT INTO t (body) VALUES (?)')
      // Under the threshold: no worker.
      insert.run('x'.repeat(1_000))
      await new Promise((resolve) => setTimeout(resolve, 60))
      expect(checkpointer.started).toBe(false)
      db.transaction(() => {
        for (let i = 0; i < 400; i++) insert.run('x'.repeat(1_000))
      })()
      expect(fs.statSync(`${file}-wal`).size).toBeGreaterThan(256 * 1024)
      await until(() => checkpointer.started)
      // The pages reach the database file although this connection never checkpointed.
      await until(() => fs.statSync(file).size > before + 300 * 1024)
      expect((db.prepare('SELECT count(*) AS n FROM t').get() as { n: number }).n).toBe(401)
    } finally {
      await checkpointer.close()
      await checkpointer.close() // twice: nothing more
      db.close()
    }
    // Closed: the worker released its connection, so a fresh one reads everything.
    const again = new Driver(file)
    expect((again.prepare('SELECT count(*) AS n FROM t').get() as { n: number }).n).toBe(401)
    again.close()
  })

  it('a file store checkpoints only as a backstop on its own connection; close ends the worker', async () => {
    const file = tempFile()
    const store = new SqliteStore(file)
    expect(store.database.pragma('wal_autocheckpoint', { simple: true })).toBe(BACKSTOP_PAGES)
    await store.close()
    const memory = new SqliteStore(':memory:')
    expect(memory.database.pragma('wal_autocheckpoint', { simple: true })).toBe(1000) // SQLite's default
    await memory.close()
  })

  it('close before the worker started, and a worker that cannot open its file, leave nothing running', async () => {
    const idle = new WalCheckpointer(tempFile(), { intervalMs: 10 })
    await idle.close()
    const dir = path.dirname(tempFile())
    // A "WAL" past the threshold beside a database that is a directory: the worker fails to open it.
    fs.mkdirSync(path.join(dir, 'broken.db'))
    fs.writeFileSync(path.join(dir, 'broken.db-wal'), Buffer.alloc(2048))
    const broken = new WalCheckpointer(path.join(dir, 'broken.db'), { intervalMs: 10, thresholdBytes: 1024 })
    await until(() => broken.started)
    await broken.close()
  })
})
