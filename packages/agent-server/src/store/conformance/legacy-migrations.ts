import type { MigrationId } from '../migration-ids.ts'
import type { Store } from '../store.ts'
import { expectLegacyGrantSlots, LEGACY_GRANT_ROWS } from './legacy-grant.ts'
import { expectLegacyThreadKeyed, LEGACY_THREAD_ROWS } from './legacy-thread.ts'

/** A migration that changes existing rows: rows as the schema just before it kept them, and what it makes of them. */
export interface LegacyMigration {
  readonly test: string
  readonly id: MigrationId
  /** Statements for both stores, run on the schema just before `id` (later migrations run when the store opens). */
  readonly rows: readonly string[]
  readonly expectMigrated: (store: Store) => Promise<void>
}

/** Each store's tests run every one of these on its own schema versions. */
export const LEGACY_MIGRATIONS: readonly LegacyMigration[] = [
  {
    test: '0009-thread-keys-per-owner gives every row of an existing thread its owner’s key',
    id: '0009-thread-keys-per-owner',
    rows: LEGACY_THREAD_ROWS,
    expectMigrated: expectLegacyThreadKeyed,
  },
  {
    test: '0018-grant-slots gives each existing grant a slot per call it has left',
    id: '0018-grant-slots',
    rows: LEGACY_GRANT_ROWS,
    expectMigrated: expectLegacyGrantSlots,
  },
]
