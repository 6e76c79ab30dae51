import type { MigrationId } from './migration-ids.ts'
import { MIGRATION_IDS } from './migration-ids.ts'

/**
 * A dialect's SQL for one migration id, or `{ madeBy }` when an earlier id's SQL in that dialect already made the
 * change (the PostgreSQL store shipped after the run leases: its `0001-initial` has them, so `0002-run-leases` has no
 * SQL of its own there).
 */
export type MigrationSql = string | { readonly madeBy: MigrationId }

/** A dialect's migrations: its SQL for exactly the shared ids (`migration-ids.ts`), written in their order. */
export type DialectMigrations = { readonly [Id in MigrationId]: MigrationSql }

/** One migration as a dialect's databases count it: what runs, and the version recorded once it ran. */
export interface MigrationStep {
  /** SQLite's `PRAGMA user_version` / PostgreSQL's `schema_migrations.version` once this step has run. */
  readonly version: number
  /** The ids the step completes: its own, then those whose change its SQL already made in this dialect. */
  readonly ids: readonly MigrationId[]
  readonly sql: string
}

/**
 * A dialect's migrations as the numbered steps its databases record: one step per id with SQL, in the order of the
 * ids; an id without SQL of its own joins the step before it. A database at version k has run the first k steps, as it
 * had before the ids were shared, so existing databases migrate on unchanged:
 *
 * - SQLite: one step per id, version k = the first k ids.
 * - PostgreSQL: version 1 = `0001-initial` and `0002-run-leases` (its initial schema had the leases); version k ≥ 2 =
 *   the first k + 1 ids.
 *
 * An id that needs no SQL in one dialect therefore never renumbers that dialect's existing databases.
 */
export function migrationSteps(dialect: DialectMigrations): MigrationStep[] {
  const steps: { version: number; ids: MigrationId[]; sql: string }[] = []
  MIGRATION_IDS.forEach((id, index) => {
    const sql = dialect[id]
    if (typeof sql === 'string') {
      steps.push({ version: steps.length + 1, ids: [id], sql })
      return
    }
    const previous = steps[steps.length - 1]
    if (previous === undefined || !(MIGRATION_IDS.indexOf(sql.madeBy) < index)) {
      throw new Error(`Migration ${id} can only be made by an earlier migration, not ${sql.madeBy}.`)
    }
    previous.ids.push(id)
  })
  return steps
}
