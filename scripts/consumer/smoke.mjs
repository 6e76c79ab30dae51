// Node ESM import of every runtime entry (better-sqlite3 and openai are not installed: importing must not
// load them). `--pg URL` only checks that PostgreSQL answers; `--pg URL --drop SCHEMA` removes a schema.
import assert from 'node:assert/strict'

const args = process.argv.slice(2)
if (args[0] === '--pg') {
  const { default: pg } = await import('pg')
  const { userInfo } = await import('node:os')
  // As the server does: a URL without a user connects as the OS user.
  const url = new URL(args[1])
  if (url.username === '') url.username = process.env.PGUSER || process.env.USER || userInfo().username
  const client = new pg.Client({ connectionString: url.toString(), connectionTimeoutMillis: 3000 })
  await client.connect()
  if (args[2] === '--drop') await client.query(`DROP SCHEMA IF EXISTS "${args[3].replace(/"/g, '')}" CASCADE`)
  await client.end()
  process.exit(0)
}

const entries = [
  '@interlude/protocol',
  '@interlude/protocol/schemas',
  '@interlude/protocol/sse',
  '@interlude/react/core',
  '@interlude/react',
  '@interlude/agent-server',
  '@interlude/agent-server/demo',
  '@interlude/client',
]
for (const entry of entries) {
  const mod = await import(entry)
  assert.ok(Object.keys(mod).length > 0, `${entry} exports nothing`)
  console.log(`imported ${entry} (${Object.keys(mod).length} exports)`)
}
// `@interlude/agent-server/testing` is for store authors' test files: it needs vitest and better-sqlite3.
const { createSqliteStore } = await import('@interlude/agent-server')
if (args[0] === '--with-sqlite') {
  // The Node 24 app installs the newest better-sqlite3: the store opens, migrates and closes.
  const store = createSqliteStore(':memory:')
  await store.close()
  console.log('createSqliteStore works with the installed better-sqlite3')
} else {
  assert.throws(() => createSqliteStore(':memory:'), /optional peer dependency "better-sqlite3"/)
  console.log('createSqliteStore names the missing better-sqlite3')
}
