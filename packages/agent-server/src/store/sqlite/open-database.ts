import fs from 'node:fs'
import path from 'node:path'
import type Database from 'better-sqlite3'
import { migrate } from './migrations.ts'
import { loadSqlite } from './sqlite-module.ts'
import { BACKSTOP_PAGES, WalCheckpointer } from './wal-checkpointer.ts'

/**
 * Opens the SQLite store's file: created with its directory on first start, in WAL mode, migrated to the latest
 * schema (`migrations.ts`).
 */
export function openSqliteDatabase(file: string, busyTimeoutMs: number): Database.Database {
  if (file !== ':memory:') {
    // Readable by this user only (docs/decisions.md#operating-it: a new directory 0700, a new file 0600; SQLite gives
    // its -wal and -shm files the database file's mode).
    fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true, mode: 0o700 })
    fs.closeSync(fs.openSync(file, 'a', 0o600))
  }
  const Driver = loadSqlite()
  const db = new Driver(file)
  db.pragma('journal_mode = WAL')
  // NORMAL is durable across process crashes in WAL mode (only an OS crash can lose the tail).
  db.pragma('synchronous = NORMAL')
  db.pragma('foreign_keys = ON')
  db.pragma(`busy_timeout = ${busyTimeoutMs}`)
  migrate(db)
  if (file !== ':memory:') {
    // Checkpoints in a worker thread; this connection's own only as a backstop (`wal-checkpointer.ts`).
    db.pragma(`wal_autocheckpoint = ${BACKSTOP_PAGES}`)
    checkpointers.set(db, new WalCheckpointer(path.resolve(file)))
  }
  return db
}

const checkpointers = new WeakMap<Database.Database, WalCheckpointer>()

/** Closes a database `openSqliteDatabase` opened, and its checkpoints' worker. */
export async function closeSqliteDatabase(db: Database.Database): Promise<void> {
  db.close()
  await checkpointers.get(db)?.close()
}
