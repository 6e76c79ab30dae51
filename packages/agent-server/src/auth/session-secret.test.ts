import fs from 'node:fs'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { startServer } from '../server.ts'
import { tempDir } from '../test-utils/harness.ts'
import { createTestSchema, PG_URL, pgAvailable } from '../test-utils/pg.ts'
import { resolveSessionSecret, SESSION_SECRET_ENV, sessionSecretFile } from './session-secret.ts'

const tmp = tempDir()
afterAll(() => tmp.cleanup())
const mode = (file: string) => fs.statSync(file).mode & 0o777
const quiet = () => undefined

async function cookieOf(url: string): Promise<string> {
  const response = await fetch(`${url}/api/agent/threads`)
  expect(response.status).toBe(200)
  return response.headers.get('set-cookie')!.split(';')[0]!
}

describe('the session secret is never a database row (docs/decisions.md#operating-it)', () => {
  it('SQLite: a 0600 file beside a 0600 database in a 0700 directory; sessions survive a restart; no settings row', async () => {
    const dbPath = path.join(tmp.dir, 'fresh', 'nested', 'agent.db')
    const first = await startServer({ dbPath, warn: quiet })
    const cookie = await cookieOf(first.url)
    await first.close()
    expect(mode(path.dirname(dbPath))).toBe(0o700)
    expect(mode(dbPath)).toBe(0o600)
    const file = sessionSecretFile(dbPath)
    expect(mode(file)).toBe(0o600)
    expect(fs.readFileSync(file, 'utf8').trim().length).toBeGreaterThanOrEqual(32)

    const second = await startServer({ dbPath, warn: quiet })
    try {
      const again = await fetch(`${second.url}/api/agent/threads`, { headers: { cookie } })
      expect(again.status).toBe(200)
      expect(again.headers.get('set-cookie')).toBeNull() // the same session: nothing new issued
      const rows = (second.store as unknown as { database: { prepare(sql: string): { all(): unknown[] } } }).database
        .prepare('SELECT key FROM settings')
        .all()
      expect(rows).toEqual([])
    } finally {
      await second.close()
    }
  })

  it('an existing session_secret row is deleted by the migration and never read', async () => {
    const dbPath = path.join(tmp.dir, 'legacy.db')
    const Database = (await import('better-sqlite3')).default
    const { MIGRATIONS } = await import('../store/sqlite/migrations.ts')
    const db = new Database(dbPath)
    // The database as it was before the migration that deletes the row.
    const before = MIGRATIONS.findIndex((sql) => sql.includes("DELETE FROM settings WHERE key = 'session_secret'"))
    for (const sql of MIGRATIONS.slice(0, before)) db.exec(sql)
    db.pragma(`user_version = ${before}`)
    db.prepare("INSERT INTO settings (key, value) VALUES ('session_secret', 'leaked-secret-from-the-db-row')").run()
    db.close()
    const server = await startServer({ dbPath, warn: quiet })
    try {
      expect(fs.readFileSync(sessionSecretFile(dbPath), 'utf8')).not.toContain('leaked-secret-from-the-db-row')
      const rows = (server.store as unknown as { database: { prepare(sql: string): { all(): unknown[] } } }).database
        .prepare("SELECT * FROM settings WHERE key = 'session_secret'")
        .all()
      expect(rows).toEqual([])
    } finally {
      await server.close()
    }
  })

  it('a secret file readable by others is tightened to 0600 with a warning; a short one is refused', () => {
    const dbPath = path.join(tmp.dir, 'loose.db')
    const file = sessionSecretFile(dbPath)
    fs.writeFileSync(file, 'a-secret-that-is-long-enough\n', { mode: 0o644 })
    fs.chmodSync(file, 0o644)
    const warnings: string[] = []
    expect(resolveSessionSecret({ env: {}, sqlitePath: dbPath, warn: (m) => warnings.push(m) })).toBe(
      'a-secret-that-is-long-enough',
    )
    expect(mode(file)).toBe(0o600)
    expect(warnings.join()).toMatch(/0600/)
    fs.writeFileSync(file, 'short\n')
    expect(() => resolveSessionSecret({ env: {}, sqlitePath: dbPath, warn: quiet })).toThrow(/16 characters/)
  })

  it('INTERLUDE_SESSION_SECRET wins over the file, and is checked', () => {
    const env = { [SESSION_SECRET_ENV]: 'the-environment-secret' }
    expect(resolveSessionSecret({ env, sqlitePath: path.join(tmp.dir, 'env.db'), warn: quiet })).toBe(
      'the-environment-secret',
    )
    expect(fs.existsSync(sessionSecretFile(path.join(tmp.dir, 'env.db')))).toBe(false)
    expect(() => resolveSessionSecret({ env: { [SESSION_SECRET_ENV]: 'has white space in it' }, warn: quiet })).toThrow(
      /whitespace/,
    )
  })

  it('PostgreSQL in cookie mode refuses to start without INTERLUDE_SESSION_SECRET', async (ctx) => {
    if (!(await pgAvailable('session secret on PostgreSQL'))) return ctx.skip()
    const { schema, drop } = await createTestSchema()
    const saved = process.env[SESSION_SECRET_ENV]
    try {
      delete process.env[SESSION_SECRET_ENV]
      await expect(startServer({ dbUrl: PG_URL, dbSchema: schema, warn: quiet })).rejects.toThrow(SESSION_SECRET_ENV)
      process.env[SESSION_SECRET_ENV] = 'one-secret-for-every-replica'
      const a = await startServer({ dbUrl: PG_URL, dbSchema: schema, warn: quiet })
      const b = await startServer({ dbUrl: PG_URL, dbSchema: schema, warn: quiet })
      try {
        // A cookie issued by one replica is accepted by the other.
        const cookie = await cookieOf(a.url)
        const other = await fetch(`${b.url}/api/agent/threads`, { headers: { cookie } })
        expect(other.status).toBe(200)
        expect(other.headers.get('set-cookie')).toBeNull()
      } finally {
        await a.close()
        await b.close()
      }
    } finally {
      if (saved === undefined) delete process.env[SESSION_SECRET_ENV]
      else process.env[SESSION_SECRET_ENV] = saved
      await drop()
    }
  })

  it('startup warns about short tokens and a public bind without tokens', async () => {
    const warnings: string[] = []
    const warn = (m: string) => warnings.push(m)
    const weak = await startServer({ dbPath: path.join(tmp.dir, 'weak.db'), tokens: { alice: 'short' }, warn })
    await weak.close()
    expect(warnings.join('\n')).toMatch(/alice.*fewer than 16/)
    const open = await startServer({ dbPath: path.join(tmp.dir, 'open.db'), host: '0.0.0.0', warn })
    await open.close()
    expect(warnings.join('\n')).toMatch(/0\.0\.0\.0 without tokens/)
    await expect(
      startServer({
        dbPath: path.join(tmp.dir, 'shared.db'),
        tokens: { a: 'same-secret-value', b: 'same-secret-value' },
      }),
    ).rejects.toThrow(/share one token/)
  })
})
