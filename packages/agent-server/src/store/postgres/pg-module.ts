import type pg from 'pg'
import { isModuleNotFound, missingPeer } from '../optional-peer.ts'

/** The `pg` module (its default export). */
export type PgModule = typeof pg

let loaded: PgModule | undefined

/** Loads `pg` on first use (`createPostgresStore` is asynchronous, so a dynamic import). */
export async function loadPg(): Promise<PgModule> {
  if (loaded) return loaded
  try {
    loaded = (await import('pg')).default
  } catch (error) {
    throw isModuleNotFound(error) ? missingPeer('pg', 'The PostgreSQL store', error) : error
  }
  return loaded
}

/** The loaded module; every caller runs after `loadPg()` (`PostgresStore.open`). */
export function pgModule(): PgModule {
  if (!loaded) throw new Error('pg is used before loadPg().')
  return loaded
}
