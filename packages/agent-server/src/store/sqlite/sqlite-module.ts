import { createRequire } from 'node:module'
import type BetterSqlite3 from 'better-sqlite3'
import { isModuleNotFound, missingPeer } from '../optional-peer.ts'

/** The better-sqlite3 constructor. */
export type SqliteDriver = typeof BetterSqlite3

let driver: SqliteDriver | undefined

/**
 * Loads `better-sqlite3` on first use. `createRequire` because the SQLite factory is synchronous
 * (a dynamic `import()` would make `createSqliteStore` async) and better-sqlite3 is CommonJS.
 */
export function loadSqlite(): SqliteDriver {
  if (driver) return driver
  try {
    driver = createRequire(import.meta.url)('better-sqlite3') as SqliteDriver
  } catch (error) {
    throw isModuleNotFound(error) ? missingPeer('better-sqlite3', 'The SQLite store', error) : error
  }
  return driver
}
