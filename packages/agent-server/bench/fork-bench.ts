/**
 * Thread forks (docs/time-travel.md): the fork of a thread with 10,000 messages, and a snapshot read of the parent
 * while forks run next to the same read on an idle server, on SQLite and on PostgreSQL, in process (`app.request`).
 *
 *   node --import tsx bench/fork-bench.ts
 *   env: BENCH_FORK_MESSAGES (10000), BENCH_FORKS (50), BENCH_IDLE_READS (200)
 */
import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { bearerTokens } from '../src/auth/authenticate.ts'
import { NO_PRINCIPAL_QUOTAS } from '../src/config/limits.ts'
import { createAgentServer } from '../src/http/app.ts'
import { scriptedModel } from '../src/models/scripted.ts'
import { createLogger } from '../src/observability/logger.ts'
import { createPostgresStore } from '../src/store/postgres/postgres-store.ts'
import { createSqliteStore } from '../src/store/sqlite/sqlite-store.ts'
import type { Store } from '../src/store/store.ts'
import { createTestSchema, PG_URL, pgAvailable } from '../src/test-utils/pg.ts'
import { fmt, median, percentile } from './bench-utils.ts'

const MESSAGES = Number(process.env.BENCH_FORK_MESSAGES ?? 10_000)
const FORKS = Number(process.env.BENCH_FORKS ?? 50)
const IDLE_READS = Number(process.env.BENCH_IDLE_READS ?? 200)
const AUTH = { Authorization: 'Bearer alice-bench-token' }

interface Figures {
  readonly store: string
  /** Forks on an otherwise idle server. */
  readonly alone: number[]
  /** Forks while a reader reads the parent's snapshot. */
  readonly fork: number[]
  readonly idle: number[]
  readonly during: number[]
}

async function bench(name: string, store: Store): Promise<Figures> {
  const app = createAgentServer({
    agent: { model: scriptedModel(() => ({ text: 'ok' })), tools: [] },
    store,
    authenticate: bearerTokens({ alice: 'alice-bench-token' }),
    limits: { ...NO_PRINCIPAL_QUOTAS, maxMessagesPerInput: MESSAGES, threadMaxMessages: MESSAGES * 2 },
    logError: () => undefined,
    logger: createLogger({ level: 'silent' }),
  })
  await app.ready()
  const request = async (path: string, init: RequestInit = {}): Promise<Response> =>
    app.request(`http://localhost${app.basePath}${path}`, { ...init, headers: { ...AUTH, ...init.headers } })
  const timed = async (send: () => Promise<Response>, status: number): Promise<number> => {
    const started = performance.now()
    const response = await send()
    await response.arrayBuffer()
    if (response.status !== status) throw new Error(`${response.status} instead of ${status}`)
    return performance.now() - started
  }

  // The parent: MESSAGES - 1 user messages in one input, and the model's answer.
  const threadId = `fork-parent-${randomUUID()}`
  const messages = Array.from({ length: MESSAGES - 1 }, (_, i) => ({
    id: `m-${i}`,
    role: 'user',
    content: `message ${i}: please check the release notes of v2.${i} before the deploy window opens`,
  }))
  const body = { threadId, runId: randomUUID(), messages, tools: [], context: [], state: {}, forwardedProps: {} }
  await timed(
    () =>
      request('/runs', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) }),
    200,
  )
  const snapshot = (await (await request(`/threads/${threadId}`)).json()) as {
    messages: { id: string }[]
    messageCount: number
  }
  if (snapshot.messageCount !== MESSAGES) throw new Error(`the parent holds ${snapshot.messageCount} messages`)
  const last = snapshot.messages[snapshot.messages.length - 1]!.id
  const read = () => timed(() => request(`/threads/${threadId}`), 200)

  for (let i = 0; i < 20; i++) await read() // warm-up
  const idle: number[] = []
  for (let i = 0; i < IDLE_READS; i++) idle.push(await read())

  const forkBody = JSON.stringify({ at: { messageId: last } })
  const forkOnce = () =>
    timed(
      () =>
        request(`/threads/${threadId}/fork`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: forkBody,
        }),
      201,
    )
  const alone: number[] = []
  for (let i = 0; i < FORKS; i++) alone.push(await forkOnce())

  // Forks one after another; a reader reads the parent's snapshot over and over until they are done.
  const fork: number[] = []
  const during: number[] = []
  let forking = true
  const reader = (async () => {
    // One read per turn of the event loop, as requests from a socket arrive (in process, `app.request` on SQLite
    // resolves in microtasks only: without the turn the reader would never let the fork go on).
    while (forking) {
      during.push(await read())
      await new Promise((resolve) => setImmediate(resolve))
    }
  })()
  for (let i = 0; i < FORKS; i++) fork.push(await forkOnce())
  forking = false
  await reader
  await app.close()
  return { store: name, alone, fork, idle, during }
}

function report(all: readonly Figures[]): void {
  const ms = (n: number) => (Math.round(n * 100) / 100).toFixed(2)
  const line = (label: string, f: (x: Figures) => number[]) =>
    console.log(
      `| ${label} | ${all.map((x) => `${ms(median(f(x)))} ms / **${ms(percentile(f(x), 99))} ms**`).join(' | ')} |`,
    )
  console.log(`\nfork of a thread with ${fmt(MESSAGES)} messages, ${FORKS} forks; median / p99\n`)
  console.log(`| measure | ${all.map((x) => x.store).join(' | ')} |`)
  console.log(`| --- | ${all.map(() => '---').join(' | ')} |`)
  line('`POST …/fork` at the last message, nothing else running', (x) => x.alone)
  line('`POST …/fork` at the last message, parent read meanwhile', (x) => x.fork)
  line(`parent snapshot, idle (${IDLE_READS} reads)`, (x) => x.idle)
  line('parent snapshot during the forks', (x) => x.during)
  const ratio = (x: Figures) => `${ms(percentile(x.during, 99) / percentile(x.idle, 99))}× (${x.during.length} reads)`
  console.log(`| during / idle p99 | ${all.map(ratio).join(' | ')} |`)
}

const results: Figures[] = []
const dir = mkdtempSync(join(tmpdir(), 'interlude-fork-bench-'))
try {
  results.push(await bench('SQLite', createSqliteStore(join(dir, 'bench.db'))))
} finally {
  rmSync(dir, { recursive: true, force: true })
}
if (await pgAvailable('fork bench on PostgreSQL')) {
  const { schema, drop } = await createTestSchema()
  try {
    results.push(await bench('PostgreSQL', await createPostgresStore({ connectionString: PG_URL, schema })))
  } finally {
    await drop()
  }
}
report(results)
