/** The durability bench's settings, databases and helpers (../durability-bench.ts). */
import { randomBytes, randomUUID } from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { withDefaultUser } from '../../src/store/postgres/connection.ts'
import { createPostgresStore } from '../../src/store/postgres/postgres-store.ts'
import { createSqliteStore } from '../../src/store/sqlite/sqlite-store.ts'
import type { Store } from '../../src/store/store.ts'

export const PG_URL =
  process.env.BENCH_PG_URL ?? process.env.INTERLUDE_TEST_PG_URL ?? 'postgres://127.0.0.1:5432/postgres'
export const APPEND = Number(process.env.BENCH_APPEND ?? 50_000)
export const TOKENS = Number(process.env.BENCH_TOKENS ?? 50_000)
export const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
export const THREADS = Number(process.env.BENCH_THREADS ?? 100)
export const ADMISSION_ROUNDS = Number(process.env.BENCH_ADMISSION_ROUNDS ?? 3)
export const IDLE = Number(process.env.BENCH_IDLE ?? 1000)
export const PARTS = new Set((process.env.BENCH_PARTS ?? '1,2,3,3b,4,5,6').split(',').map((p) => p.trim()))
export const BACKENDS = new Set((process.env.BENCH_BACKENDS ?? 'SQLite,PostgreSQL').split(',').map((p) => p.trim()))
export const AUTH = { Authorization: 'Bearer bench-secret' }
/** Part 4's PostgreSQL set-ups, `name=flags;name=flags` (the first is the reference of the ratios). */
export const PG_SETUPS: [string, string[]][] = (process.env.BENCH_PG_SETUPS ?? '1 process=;--workers 2=--workers 2')
  .split(';')
  .map((entry) => {
    const [name = '', flags = ''] = entry.split('=')
    return [name.trim(), flags.split(' ').filter((f) => f !== '')]
  })
export const ROOT = fileURLToPath(new URL('../..', import.meta.url))

export const ms = (n: number) => `${n.toFixed(2)} ms`

// ---- databases ---------------------------------------------------------------------------------

export const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'interlude-durability-'))
export const schemas: string[] = []

export async function adminQuery(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: withDefaultUser(PG_URL) })
  await client.connect()
  try {
    await client.query(sql)
  } finally {
    await client.end()
  }
}

export async function newSchema(): Promise<string> {
  const schema = `interlude_bench_${randomBytes(5).toString('hex')}`
  schemas.push(schema)
  await adminQuery(`CREATE SCHEMA "${schema}"`)
  return schema
}

export interface Backend {
  readonly name: string
  open(): Promise<{ store: Store; cliArgs: string[] }>
}

export let fileCounter = 0
export const allBackends: Backend[] = [
  {
    name: 'SQLite',
    open: async () => {
      const file = path.join(tmp, `bench-${++fileCounter}.db`)
      return { store: createSqliteStore(file), cliArgs: ['--db', file] }
    },
  },
  {
    name: 'PostgreSQL',
    open: async () => {
      const schema = await newSchema()
      return {
        store: await createPostgresStore({ connectionString: PG_URL, schema }),
        cliArgs: ['--db', PG_URL, '--db-schema', schema],
      }
    },
  },
]
export const backends = allBackends.filter((b) => BACKENDS.has(b.name))

export const lease = () => ({ executorId: 'bench', leaseUntil: Date.now() + 3_600_000 })

export async function newRun(store: Store, threadId = `th-${randomUUID()}`, runId = `run-${randomUUID()}`) {
  const started = await store.startInputRun({
    threadId,
    ownerId: 'bench',
    runId,
    parentRunId: undefined,
    expectedRevision: null,
    initialState: {},
    messages: [],
    toolResults: [],
    now: Date.now(),
    ...lease(),
  })
  if (!started.ok) throw new Error(`could not start a run: ${started.reason}`)
  return { threadId, runId }
}
