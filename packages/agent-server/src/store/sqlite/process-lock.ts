import fs from 'node:fs'
import path from 'node:path'
import { loadSqlite } from './sqlite-module.ts'

/**
 * Who else may use a SQLite file at the same time (docs/decisions.md#operating-it): a server started without
 * `--shared` is its only user — at startup it closes every run left `running`, which would fail the runs of another
 * live process — so a second process must refuse to start rather than do that.
 *
 * The lock is an OS file lock (POSIX advisory, what SQLite itself locks with) on `<db>.lock`, taken through SQLite:
 * the lock file is an empty SQLite database opened with `locking_mode = EXCLUSIVE`. An exclusive server holds an
 * EXCLUSIVE lock (`BEGIN EXCLUSIVE`, never committed); each `--shared` server holds a SHARED lock (a read). They
 * exclude each other both ways, `--shared` servers coexist, and the kernel releases the lock when the process dies
 * however it dies (kill -9 included): no stale PID file, no PID reuse to guess about. Chosen over
 * `locking_mode = EXCLUSIVE` on the database itself, which would also lock out read-only tools (the sqlite3 shell,
 * backups) and turn a second server into a 5 s busy wait instead of a clear message.
 */
export interface ProcessLock {
  readonly path: string
  release(): void
}

/** The second process's message: names the file and the two ways out. */
export class SqliteLockedError extends Error {
  constructor(dbPath: string, mode: 'exclusive' | 'shared') {
    super(
      mode === 'exclusive'
        ? `Another interlude-server process is using ${dbPath}. Stop it first, or start every process on this file with --shared.`
        : `An interlude-server process started without --shared is using ${dbPath}. Stop it, or restart it with --shared.`,
    )
    this.name = 'SqliteLockedError'
  }
}

export function lockPathOf(dbPath: string): string {
  return `${path.resolve(dbPath)}.lock`
}

/** Takes the lock of `dbPath` for this process (`exclusive`: the only server; `shared`: one of several). */
export function acquireSqliteLock(dbPath: string, mode: 'exclusive' | 'shared'): ProcessLock {
  const file = lockPathOf(dbPath)
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 })
  const Driver = loadSqlite()
  const db = new Driver(file)
  try {
    db.pragma('busy_timeout = 0')
    db.pragma('locking_mode = EXCLUSIVE')
    if (mode === 'exclusive') db.exec('BEGIN EXCLUSIVE')
    else db.prepare('SELECT count(*) FROM sqlite_master').get()
  } catch (error) {
    db.close()
    if ((error as { code?: unknown }).code === 'SQLITE_BUSY') throw new SqliteLockedError(dbPath, mode)
    throw error
  }
  let released = false
  return {
    path: file,
    release() {
      if (released) return
      released = true
      db.close()
    },
  }
}
