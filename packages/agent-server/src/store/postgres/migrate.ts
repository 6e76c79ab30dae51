import type { PoolClient } from 'pg'
import type { Clock } from '../../clock.ts'
import { systemClock } from '../../clock.ts'
import { PG_MIGRATIONS, quoteIdent } from './migrations.ts'

/**
 * Creates the schema (if named) and applies missing migrations in one transaction under an
 * advisory lock, so replicas starting together migrate once. Returns the schema version.
 * `now` stamps `applied_at` (the store's clock).
 */
export async function migratePostgres(
  client: PoolClient,
  schema: string | undefined,
  now: Clock = systemClock,
): Promise<number> {
  await client.query('BEGIN')
  try {
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`interlude-migrations:${schema ?? ''}`])
    if (schema !== undefined) await client.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(schema)}`)
    await client.query(
      'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at BIGINT NOT NULL)',
    )
    const { rows } = await client.query<{ version: number | null }>(
      'SELECT MAX(version) AS version FROM schema_migrations',
    )
    const current = rows[0]?.version ?? 0
    if (current > PG_MIGRATIONS.length) {
      throw new Error(`Database schema version ${current} is newer than this server (${PG_MIGRATIONS.length}).`)
    }
    for (let version = current; version < PG_MIGRATIONS.length; version++) {
      await client.query(PG_MIGRATIONS[version]!)
      await client.query('INSERT INTO schema_migrations (version, applied_at) VALUES ($1, $2)', [version + 1, now()])
    }
    await client.query('COMMIT')
    return PG_MIGRATIONS.length
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined)
    throw error
  }
}
