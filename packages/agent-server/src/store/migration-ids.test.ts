import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { MIGRATION_IDS } from './migration-ids.ts'
import type { DialectMigrations } from './migration-steps.ts'
import { migrationSteps } from './migration-steps.ts'
import { MIGRATIONS, SQLITE_MIGRATIONS } from './sqlite/migrations.ts'
import { PG_MIGRATIONS, POSTGRES_MIGRATIONS } from './postgres/migrations.ts'

const sha256 = (sql: string) => createHash('sha256').update(sql).digest('hex')

/**
 * The SQL of every schema version that shipped before the ids were shared, by its hash: a database recorded at one of
 * these versions ran exactly this SQL, so it must never change (new migrations append; nothing to pin for them).
 */
const SHIPPED = {
  sqlite: [
    '53fc8501529aaaa6e6fae0ccfd5be95f95890ac69fdbb17f2926d27fdf52bd98',
    'e858039c0c3f6072cac800357a7dd7d2c6296e2dd3514faca26e38521aef22f5',
    '1e37c3dc5c428f7a9bbf8e469b54ec550742ad6790e4762c29357bee311c1e71',
    '20f8f8bcb4215ab473a3a12468a26b5f6fa34ce208211639f8d5044d4669d057',
    '396c3fa687786886ed03cda2230992c52155b15a2a5d0e0b61f91b84fb202799',
    '195807f77d9bb2569a21cfb07c9bb2b318b08808d44a7dbbf3eafa4ab6ddaa04',
    '2e6a4f7a65d975fdf09e6f7a9856421a7760430c1c54354c2c211c0ef03cff30',
    'e31d85f84c3dceb2d129de870cf6beb05980528a23953498349c52bfb01f71dc',
    '865a7a7baad60a3aacd508b6632bd6bf45a13637a8136788b87b2dcef4389188',
  ],
  postgres: [
    'ec892faf4c711674077f56fb8d58675778a9369ceaf2bdae3d4d9b620d6f65ee',
    '6d2588762cfe653d1dceb5531814ae8959727a50cbde6143a0fa5adaa169a9c9',
    'e07762bd685c34496182f82990a461abc3240441dba3d9414b86f71c3e437d47',
    'b5d6f63ecd405da5e1b2cc0034ee8de6707143dde39c0f4969317e394ed6f0cb',
    '88f32d8ef160687558afe0b6ce5e34cd5173435febb740c84ec90d5f814871eb',
    '7890bb935712d096d105f034d54dcb1b1cd23171babd4e799cac288da6495ae0',
    '755254490eddba80ba1db156dc4bded3399f61f4fbbf3682cc52ee4173a7f38c',
    'ae8c099a0241702fd1ace279a72e62d70c3960fcd1b823a228b099a1573c1729',
  ],
}

describe('migration ids', () => {
  it('are unique and numbered in ascending order', () => {
    // Ids are reserved ahead for work landing in parallel, so one may land before a smaller reserved one.
    expect(new Set(MIGRATION_IDS).size).toBe(MIGRATION_IDS.length)
    const numbers = MIGRATION_IDS.map((id) => {
      expect(id).toMatch(/^\d{4}-[a-z0-9-]+$/)
      return Number(id.slice(0, 4))
    })
    expect(numbers.slice(0, 14)).toEqual(Array.from({ length: 14 }, (_, i) => i + 1))
    numbers.forEach((n, i) => i > 0 && expect(n).toBeGreaterThan(numbers[i - 1]!))
  })

  it('both dialects define exactly the shared ids, in the same order', () => {
    expect(Object.keys(SQLITE_MIGRATIONS)).toEqual([...MIGRATION_IDS])
    expect(Object.keys(POSTGRES_MIGRATIONS)).toEqual([...MIGRATION_IDS])
  })

  it('SQLite records one version per id', () => {
    const steps = migrationSteps(SQLITE_MIGRATIONS)
    expect(steps.map((step) => [step.version, step.ids])).toEqual(MIGRATION_IDS.map((id, i) => [i + 1, [id]]))
    expect(MIGRATIONS).toEqual(steps.map((step) => step.sql))
  })

  it('PostgreSQL records 0001 and 0002 as version 1 (its initial schema had the leases), then one version per id', () => {
    const steps = migrationSteps(POSTGRES_MIGRATIONS)
    expect(POSTGRES_MIGRATIONS['0002-run-leases']).toEqual({ madeBy: '0001-initial' })
    expect(steps.map((step) => [step.version, step.ids])).toEqual([
      [1, ['0001-initial', '0002-run-leases']],
      ...MIGRATION_IDS.slice(2).map((id, i) => [i + 2, [id]]),
    ])
    expect(PG_MIGRATIONS).toEqual(steps.map((step) => step.sql))
  })

  it('every version a database may have recorded still runs the SQL it ran when it shipped', () => {
    expect(MIGRATIONS.slice(0, SHIPPED.sqlite.length).map(sha256)).toEqual(SHIPPED.sqlite)
    expect(PG_MIGRATIONS.slice(0, SHIPPED.postgres.length).map(sha256)).toEqual(SHIPPED.postgres)
  })

  it('an id without SQL must name an earlier migration as the one that made its change', () => {
    const later = { ...SQLITE_MIGRATIONS, '0002-run-leases': { madeBy: '0003-approvals-from-anywhere' } }
    expect(() => migrationSteps(later as DialectMigrations)).toThrow(/earlier/)
    const first = { ...SQLITE_MIGRATIONS, '0001-initial': { madeBy: '0001-initial' } }
    expect(() => migrationSteps(first as DialectMigrations)).toThrow(/earlier/)
  })
})
