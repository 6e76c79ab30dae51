import type Database from 'better-sqlite3'
import { rolledBack } from '../rollback-with.ts'

/**
 * Runs `fn` in a `BEGIN IMMEDIATE` transaction (it serialises writers across processes); a thrown `RollbackWith` rolls
 * back and answers its value.
 */
export function writeTransaction<T>(db: Database.Database, fn: () => T): T {
  try {
    return db.transaction(fn).immediate()
  } catch (error) {
    const refused = rolledBack<T>(error)
    if (refused) return refused.value
    throw error
  }
}
