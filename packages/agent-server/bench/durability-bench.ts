/**
 * Durability benchmarks (not tests). Run: pnpm --filter @interlude/agent-server bench:durability
 * (builds are needed for part 5: pnpm -r --filter "./packages/**" run build).
 *
 * Side by side in one run, SQLite and PostgreSQL:
 * 1. Event-log append throughput (events/s): batches of 256 (what a run writes) and single-event commits.
 * 2. Claim latency (store.claimBatch) p50/p99, 100 concurrent claims on 100 paused threads.
 * 3. Events/s of one scripted run through POST /runs with the durable log vs a bare Hono streamSSE loop.
 * 3b. The same run on PostgreSQL through the CLI in child processes, BENCH_RUN_STREAMS (2) at once: one process and
 *    `--workers 2` against bare Hono loops in one and two processes, in turns (and BENCH_BASELINE_CLI beside them).
 * 4. Resume admission p50/p99 (Server-Timing) at 100 concurrent threads, the CLI in a child process; PostgreSQL with
 *    one process and with `--workers 2` measured in turns (and BENCH_BASELINE_CLI, another checkout's CLI, beside them).
 * 5. RSS of one server process holding 1,000 idle SSE connections (tails of silent runs).
 * 6. PostgreSQL statements (round trips) per resume admission, per new-input admission and per durable run: counted,
 *    so deterministic (the before/after figure of a change that timings on a busy machine cannot give).
 *
 * Env: BENCH_PG_SETUPS (part 4, default "1 process=;--workers 2=--workers 2"), BENCH_BASELINE_CLI (part 4: another
 * checkout's src/cli.ts measured beside them), BENCH_PARTS (e.g. "1,4"; default all), BENCH_PG_URL (default INTERLUDE_TEST_PG_URL or postgres://127.0.0.1:5432/postgres), BENCH_APPEND (50000),
 * BENCH_TOKENS (50000), BENCH_ROUNDS (3), BENCH_THREADS (100), BENCH_ADMISSION_ROUNDS (3), BENCH_IDLE (1000).
 * Every PostgreSQL part uses its own schema (interlude_bench_<random>), dropped at the end.
 */
import { spawn } from 'node:child_process'
import { randomBytes, randomUUID } from 'node:crypto'
import fs from 'node:fs'
import http from 'node:http'
import os from 'node:os'
import path from 'node:path'
import type { AddressInfo } from 'node:net'
import { fileURLToPath } from 'node:url'
import { serve } from '@hono/node-server'
import { Hono } from 'hono'
import { streamSSE } from 'hono/streaming'
import pg from 'pg'
import { EventType } from '@interlude/protocol'
import { scriptedModel } from '../src/models/scripted.ts'
import { admissionRound, countFrames, fmt, median, percentile } from './bench-utils.ts'
import { BASELINE_CLI, launched, spawnCli } from './cli-process.ts'
import type { ServerProcess } from './cli-process.ts'
import { startServer } from '../src/server.ts'
import { NO_PRINCIPAL_QUOTAS } from '../src/config/limits.ts'
import { withDefaultUser } from '../src/store/postgres/connection.ts'
import { createPostgresStore } from '../src/store/postgres/postgres-store.ts'
import { createSqliteStore } from '../src/store/sqlite/sqlite-store.ts'
import type { Store } from '../src/store/store.ts'

const PG_URL = process.env.BENCH_PG_URL ?? process.env.INTERLUDE_TEST_PG_URL ?? 'postgres://127.0.0.1:5432/postgres'
const APPEND = Number(process.env.BENCH_APPEND ?? 50_000)
const TOKENS = Number(process.env.BENCH_TOKENS ?? 50_000)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const THREADS = Number(process.env.BENCH_THREADS ?? 100)
const ADMISSION_ROUNDS = Number(process.env.BENCH_ADMISSION_ROUNDS ?? 3)
const IDLE = Number(process.env.BENCH_IDLE ?? 1000)
const PARTS = new Set((process.env.BENCH_PARTS ?? '1,2,3,3b,4,5,6').split(',').map((p) => p.trim()))
const BACKENDS = new Set((process.env.BENCH_BACKENDS ?? 'SQLite,PostgreSQL').split(',').map((p) => p.trim()))
const AUTH = { Authorization: 'Bearer bench-secret' }
/** Part 4's PostgreSQL set-ups, `name=flags;name=flags` (the first is the reference of the ratios). */
const PG_SETUPS: [string, string[]][] = (process.env.BENCH_PG_SETUPS ?? '1 process=;--workers 2=--workers 2')
  .split(';')
  .map((entry) => {
    const [name = '', flags = ''] = entry.split('=')
    return [name.trim(), flags.split(' ').filter((f) => f !== '')]
  })
const ROOT = fileURLToPath(new URL('..', import.meta.url))

const ms = (n: number) => `${n.toFixed(2)} ms`

// ---- databases ---------------------------------------------------------------------------------

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'interlude-durability-'))
const schemas: string[] = []

async function adminQuery(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: withDefaultUser(PG_URL) })
  await client.connect()
  try {
    await client.query(sql)
  } finally {
    await client.end()
  }
}

async function newSchema(): Promise<string> {
  const schema = `interlude_bench_${randomBytes(5).toString('hex')}`
  schemas.push(schema)
  await adminQuery(`CREATE SCHEMA "${schema}"`)
  return schema
}

interface Backend {
  readonly name: string
  open(): Promise<{ store: Store; cliArgs: string[] }>
}

let fileCounter = 0
const allBackends: Backend[] = [
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
const backends = allBackends.filter((b) => BACKENDS.has(b.name))

const lease = () => ({ executorId: 'bench', leaseUntil: Date.now() + 3_600_000 })

async function newRun(store: Store, threadId = `th-${randomUUID()}`, runId = `run-${randomUUID()}`) {
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

// ---- 1. append throughput ----------------------------------------------------------------------

async function appendThroughput(store: Store, batch: number, total: number): Promise<number> {
  const { threadId, runId } = await newRun(store)
  const json = JSON.stringify({ type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'msg_bench', delta: 'tok ' })
  const events = Array.from({ length: batch }, () => ({ type: EventType.TEXT_MESSAGE_CONTENT, json }))
  const started = performance.now()
  for (let written = 0; written < total; written += batch) await store.appendEvents(threadId, runId, events)
  return total / ((performance.now() - started) / 1000)
}

// ---- 2. claim latency --------------------------------------------------------------------------

async function claimLatency(store: Store): Promise<number[]> {
  const samples: number[] = []
  for (let round = 0; round < ADMISSION_ROUNDS + 1; round++) {
    const paused = await Promise.all(
      Array.from({ length: THREADS }, async () => {
        const { threadId, runId } = await newRun(store)
        const batchId = `batch_${randomUUID()}`
        await store.insertToolCalls([
          {
            threadId,
            toolCallId: 'c1',
            runId,
            messageId: 'a1',
            toolName: 'deploy',
            argsText: '{}',
            kind: 'server',
            status: 'awaiting_decision',
            now: Date.now(),
          },
        ])
        await store.createBatch({
          batchId,
          threadId,
          runId,
          interrupts: [
            {
              interrupt: { id: `int_${randomUUID()}`, reason: 'tool_call', toolCallId: 'c1' },
              kind: 'approval',
              toolCallId: 'c1',
              toolName: 'deploy',
            },
          ],
          createdAt: Date.now(),
          expiresAt: Date.now() + 3_600_000,
          onExpiry: 'keep',
        })
        await store.finishRun({
          threadId,
          runId,
          status: 'interrupted',
          outcome: { type: 'interrupt', interrupts: [] },
          errorCode: undefined,
          events: [{ type: EventType.RUN_FINISHED, json: '{}' }],
          closeBatch: undefined,
          now: Date.now(),
        })
        return { threadId, batchId }
      }),
    )
    const times = await Promise.all(
      paused.map(async ({ threadId, batchId }) => {
        const started = performance.now()
        const claim = await store.claimBatch({
          threadId,
          batchId,
          runId: `run-${randomUUID()}`,
          decisionHash: 'h',
          decision: [],
          now: Date.now(),
          ...lease(),
          decidedBy: 'bench',
          via: 'run',
        })
        if (!claim.ok) throw new Error(`claim refused: ${claim.reason}`)
        return performance.now() - started
      }),
    )
    if (round > 0) samples.push(...times)
  }
  return samples
}

// ---- 3. run events/s vs bare Hono ----------------------------------------------------------------

async function bareHonoServer() {
  const messageId = `msg_${randomUUID()}`
  const events: string[] = [JSON.stringify({ type: EventType.RUN_STARTED, threadId: 'bare', runId: 'bare' })]
  events.push(JSON.stringify({ type: EventType.TEXT_MESSAGE_START, messageId, role: 'assistant' }))
  for (let i = 0; i < TOKENS; i++)
    events.push(JSON.stringify({ type: EventType.TEXT_MESSAGE_CONTENT, messageId, delta: 'tok ' }))
  events.push(JSON.stringify({ type: EventType.TEXT_MESSAGE_END, messageId }))
  events.push(
    JSON.stringify({ type: EventType.RUN_FINISHED, threadId: 'bare', runId: 'bare', outcome: { type: 'success' } }),
  )
  const app = new Hono()
  app.post('/runs', (c) =>
    streamSSE(c, async (stream) => {
      for (let i = 0; i < events.length; i++) await stream.writeSSE({ data: events[i]!, id: String(i + 1) })
    }),
  )
  const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s))
  })
  const port = (server.address() as AddressInfo).port
  return { url: `http://127.0.0.1:${port}/runs`, close: () => new Promise<void>((r) => server.close(() => r())) }
}

async function runThroughput(): Promise<{ bare: number; durable: Record<string, number> }> {
  const text = 'tok '.repeat(TOKENS)
  const agent = { model: scriptedModel(() => ({ text }), { pacingMs: 0 }) }
  const bare = await bareHonoServer()
  const servers: [string, Awaited<ReturnType<typeof startServer>>][] = [
    [
      'SQLite',
      await startServer({
        dbPath: path.join(tmp, 'run.db'),
        tokens: { bench: 'bench-secret' },
        agent,
        limits: NO_PRINCIPAL_QUOTAS,
      }),
    ],
    [
      'PostgreSQL',
      await startServer({
        dbUrl: PG_URL,
        dbSchema: await newSchema(),
        tokens: { bench: 'bench-secret' },
        agent,
        limits: NO_PRINCIPAL_QUOTAS,
      }),
    ],
  ]
  const samples: Record<string, number[]> = { bare: [], SQLite: [], PostgreSQL: [] }
  try {
    for (let round = 0; round < ROUNDS + 1; round++) {
      const order: string[] = round % 2 === 0 ? ['bare', 'SQLite', 'PostgreSQL'] : ['PostgreSQL', 'SQLite', 'bare']
      for (const which of order) {
        const started = performance.now()
        let frames: number
        if (which === 'bare') {
          frames = await countFrames(await fetch(bare.url, { method: 'POST' }))
        } else {
          const server = servers.find(([name]) => name === which)![1]
          const body = JSON.stringify({
            threadId: `bench-${randomUUID()}`,
            runId: randomUUID(),
            messages: [{ id: randomUUID(), role: 'user', content: 'go' }],
          })
          frames = await countFrames(
            await fetch(`${server.baseUrl}/runs`, {
              method: 'POST',
              headers: { ...AUTH, 'Content-Type': 'application/json' },
              body,
            }),
          )
        }
        if (round > 0) samples[which]!.push(frames / ((performance.now() - started) / 1000))
      }
    }
  } finally {
    await bare.close()
    for (const [, server] of servers) await server.close()
  }
  return {
    bare: median(samples.bare!),
    durable: { SQLite: median(samples.SQLite!), PostgreSQL: median(samples.PostgreSQL!) },
  }
}

// ---- 3b. runs through the CLI: one process, --workers 2, bare Hono -----------------------------------

/** Part 3b's streams per measurement: concurrent runs, so that two workers each get one. */
const RUN_STREAMS = Number(process.env.BENCH_RUN_STREAMS ?? 2)

interface RunSetup {
  readonly name: string
  start(): Promise<ServerProcess>
}

/** Events/s over `RUN_STREAMS` concurrent runs (all frames / wall time until the last stream ends). */
async function concurrentRuns(baseUrl: string): Promise<number> {
  const started = performance.now()
  const frames = await Promise.all(
    Array.from({ length: RUN_STREAMS }, async () => {
      const response = await fetch(`${baseUrl}/runs`, {
        method: 'POST',
        headers: { ...AUTH, 'Content-Type': 'application/json' },
        body: JSON.stringify({
          threadId: `bench-${randomUUID()}`,
          runId: randomUUID(),
          messages: [{ id: randomUUID(), role: 'user', content: 'go' }],
        }),
      })
      return countFrames(response)
    }),
  )
  return frames.reduce((a, b) => a + b, 0) / ((performance.now() - started) / 1000)
}

/**
 * The durable PostgreSQL run served by the real CLI in a child process — one process and `--workers 2` (and
 * BENCH_BASELINE_CLI) — against a bare Hono `streamSSE` loop in a child (one process and two), in turns: per round
 * each set-up is started, warmed with one measurement and measured once, in rotating order.
 */
async function runThroughputProcesses(): Promise<Map<string, number>> {
  const agentModule = path.join(ROOT, 'bench/fixtures/long-text-agent.ts')
  const bareScript = path.join(ROOT, 'bench/fixtures/bare-sse.ts')
  const bare = (workers: number) => () => {
    const child = spawn(process.execPath, ['--import', 'tsx', bareScript], {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, BENCH_TOKENS: String(TOKENS), BENCH_WORKERS: String(workers) },
    })
    return launched(child, () => child.kill('SIGTERM'))
  }
  const cli = (args: string[], script?: string) => async () => {
    const { store, cliArgs } = await allBackends.find((b) => b.name === 'PostgreSQL')!.open()
    await store.close()
    process.env.BENCH_TOKENS = String(TOKENS)
    return spawnCli(['--token', 'bench=bench-secret', '--agent', agentModule, ...cliArgs, ...args], script)
  }
  const setups: RunSetup[] = [
    { name: 'bare Hono, 1 process', start: bare(1) },
    { name: 'bare Hono, 2 processes', start: bare(2) },
    { name: 'PostgreSQL, 1 process', start: cli([]) },
    { name: 'PostgreSQL, --workers 2', start: cli(['--workers', '2']) },
    ...(BASELINE_CLI !== undefined ? [{ name: 'PostgreSQL, baseline CLI', start: cli([], BASELINE_CLI) }] : []),
  ]
  const samples = new Map(setups.map((setup) => [setup.name, [] as number[]]))
  for (let round = 0; round < ROUNDS; round++) {
    for (let i = 0; i < setups.length; i++) {
      const setup = setups[(i + round) % setups.length]!
      const server = await setup.start()
      try {
        await concurrentRuns(server.baseUrl)
        samples.get(setup.name)!.push(await concurrentRuns(server.baseUrl))
      } finally {
        await server.stop()
      }
    }
  }
  return new Map([...samples].map(([name, xs]) => [name, median(xs)]))
}

// ---- 4. admission through the CLI ----------------------------------------------------------------

/** One resume of an admission round: the server's admission, its wait for a turn, the client's time to headers. */
type AdmissionSample = Awaited<ReturnType<typeof admissionRound>>[number]

/** `rounds` measured admission rounds (after one warm-up round) on a fresh CLI process (set). */
async function admissionLatency(
  cliArgs: string[],
  rounds = ADMISSION_ROUNDS,
  script?: string,
): Promise<AdmissionSample[]> {
  const server = await spawnCli(['--token', 'bench=bench-secret', ...cliArgs], script)
  const post = (body: unknown) =>
    fetch(`${server.baseUrl}/runs`, {
      method: 'POST',
      headers: { ...AUTH, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    })
  const samples: AdmissionSample[] = []
  try {
    for (let round = 0; round < rounds + 1; round++) {
      const round_ = await admissionRound(post, THREADS)
      if (round > 0) samples.push(...round_)
    }
  } finally {
    await server.stop()
  }
  return samples
}

/** The admission line of part 4: the server's figure (the target's), the wait for a turn and the client's view. */
function admissionLine(name: string, samples: readonly AdmissionSample[], target: string, vs = ''): string {
  const server = samples.map((s) => s.server)
  const client = samples.map((s) => s.elapsed)
  const turn = samples.map((s) => s.turn)
  return (
    `   ${name.padEnd(30)} p50 ${ms(percentile(server, 50))}, p99 ${ms(percentile(server, 99))}, max ${ms(Math.max(...server))} (target p99 ≤ ${target}${vs})\n` +
    `   ${''.padEnd(30)} wait for a turn p99 ${ms(percentile(turn, 99))}; client, request to headers: p50 ${ms(percentile(client, 50))}, p99 ${ms(percentile(client, 99))}`
  )
}

interface AdmissionSetup {
  readonly name: string
  readonly args: readonly string[]
  readonly script?: string
}

/**
 * PostgreSQL admission in several set-ups measured in turns (one fresh process set and one measured round each per
 * turn, the order rotating), so that the load of other work on the machine falls on all of them alike: one process,
 * `--workers 2`, and — with BENCH_BASELINE_CLI — another checkout's CLI as the "before" of a change.
 */
async function admissionSideBySide(
  setups: readonly AdmissionSetup[],
  backend = 'PostgreSQL',
): Promise<Map<string, AdmissionSample[]>> {
  const samples = new Map(setups.map((s) => [s.name, [] as AdmissionSample[]]))
  for (let turn = 0; turn < ADMISSION_ROUNDS; turn++) {
    const order = setups.map((_, i) => setups[(i + turn) % setups.length]!)
    for (const setup of order) {
      const { store, cliArgs } = await allBackends.find((b) => b.name === backend)!.open()
      await store.close()
      samples.get(setup.name)!.push(...(await admissionLatency([...cliArgs, ...setup.args], 1, setup.script)))
    }
  }
  return samples
}

// ---- 5. idle SSE connections ---------------------------------------------------------------------

function rssOf(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8')
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) * 1024
}

async function idleConnections(): Promise<{ before: number; after: number; connections: number; threads: number }> {
  const fixture = path.join(ROOT, 'test/fixtures/crash-server.mjs')
  if (!fs.existsSync(path.join(ROOT, 'dist/index.js')))
    throw new Error('part 5 needs the build: pnpm -r --filter "./packages/**" run build')
  const dir = path.join(tmp, 'idle')
  const child = spawn(process.execPath, [fixture, '--db', path.join(tmp, 'idle.db'), '--dir', dir], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const server = await launched(child, () => child.kill('SIGTERM'))
  const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity })
  const requests: http.ClientRequest[] = []
  try {
    // Ten threads whose runs wait silently (their model blocks until the text-release file exists).
    const threads = 10
    const threadIds: string[] = []
    for (let t = 0; t < threads; t++) {
      const threadId = `idle-${randomUUID()}`
      threadIds.push(threadId)
      void fetch(`${server.baseUrl}/runs`, {
        method: 'POST',
        headers: { Authorization: 'Bearer alice-secret-token', 'Content-Type': 'application/json' },
        body: JSON.stringify({
          threadId,
          runId: randomUUID(),
          messages: [{ id: randomUUID(), role: 'user', content: 'block please' }],
        }),
      }).then((r) => r.arrayBuffer().catch(() => undefined))
    }
    const url = new URL(server.baseUrl)
    // Wait until every run is active (the thread snapshot says running).
    for (const threadId of threadIds) {
      for (;;) {
        const res = await fetch(`${server.baseUrl}/threads/${threadId}`, {
          headers: { Authorization: 'Bearer alice-secret-token' },
        })
        if (res.status === 200 && ((await res.json()) as { status: string }).status === 'running') break
        await new Promise((r) => setTimeout(r, 20))
      }
    }
    global.gc?.()
    const before = rssOf(child.pid!)
    let connected = 0
    await new Promise<void>((resolve, reject) => {
      for (let i = 0; i < IDLE; i++) {
        const req = http.get(
          {
            host: url.hostname,
            port: url.port,
            path: `${url.pathname}/threads/${threadIds[i % threads]}/events`,
            headers: { Authorization: 'Bearer alice-secret-token' },
            agent,
          },
          (res) => {
            // The replay arrives, then the stream stays open and silent (the run waits).
            res.once('data', () => {
              connected += 1
              if (connected === IDLE) resolve()
            })
          },
        )
        req.on('error', reject)
        requests.push(req)
      }
    })
    // Let the server settle (allocations of the burst), then read its resident set.
    await new Promise((r) => setTimeout(r, 1000))
    const after = rssOf(child.pid!)
    return { before, after, connections: connected, threads }
  } finally {
    for (const req of requests) req.destroy()
    agent.destroy()
    fs.writeFileSync(path.join(dir, 'text-release'), '1')
    await server.stop()
  }
}

// ---- 6. PostgreSQL round trips -----------------------------------------------------------------------

interface RoundTrips {
  /** Statements on the admission pool until the answer's headers (BEGIN/COMMIT included). */
  readonly admission: number
  /** Every statement of the request: admission, the run it started and its stream, until the stream ends. */
  readonly total: number
  /** Transactions (BEGIN) among `total`. */
  readonly transactions: number
}

/**
 * Counts the statements the PostgreSQL store sends (each one round trip) for one request at a time, in process:
 * a resume admission, a new-input admission and one durable run of TOKENS events. Deterministic, unlike the timings:
 * the figure to compare before/after a change. Lease renewals (a timer, not the request) are left out.
 */
async function roundTrips(): Promise<{ resume: RoundTrips; input: RoundTrips; run: RoundTrips & { events: number } }> {
  const poolOf = new WeakMap<object, 'run' | 'admission'>()
  let mainPool: object | undefined
  const counts = { admission: 0, total: 0, transactions: 0 }
  const heartbeat = 'UPDATE runs SET lease_until'
  const clientQuery = pg.Client.prototype.query
  const poolConnect = pg.Pool.prototype.connect
  // Tag each pooled client with its pool on checkout (pg-pool's query() checks out through connect() too).
  const tag = (pool: object, client: object) => poolOf.set(client, pool === mainPool ? 'run' : 'admission')
  const connect = poolConnect as (this: pg.Pool, callback?: (...args: unknown[]) => void) => unknown
  pg.Pool.prototype.connect = function (this: pg.Pool, callback?: (...args: unknown[]) => void) {
    if (typeof callback === 'function')
      return connect.call(this, (error: unknown, client: unknown, done: unknown) => {
        if (typeof client === 'object' && client !== null) tag(this, client)
        callback(error, client, done)
      })
    return (connect.call(this) as Promise<pg.PoolClient>).then((client) => (tag(this, client), client))
  } as never
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const config = args[0] as string | { text?: string }
    const text = typeof config === 'string' ? config : (config.text ?? '')
    if (!text.startsWith(heartbeat) && !text.startsWith('LISTEN')) {
      counts.total += 1
      if (text === 'BEGIN') counts.transactions += 1
      if (poolOf.get(this) === 'admission') counts.admission += 1
    }
    return (clientQuery as (...a: unknown[]) => unknown).apply(this, args)
  } as never
  const text = 'tok '.repeat(TOKENS)
  const servers: Awaited<ReturnType<typeof startServer>>[] = []
  const start = async (agent?: Parameters<typeof startServer>[0]['agent']) => {
    const server = await startServer({
      dbUrl: PG_URL,
      dbSchema: await newSchema(),
      tokens: { bench: 'bench-secret' },
      limits: NO_PRINCIPAL_QUOTAS,
      logLevel: 'warn',
      pacingMs: 0,
      // No sweeps or polls during the count (runs here finish long before a lease could end).
      expirySweepMs: 3_600_000,
      pollMs: 3_600_000,
      runLeaseMs: 3_600_000,
      ...(agent ? { agent } : {}),
    })
    servers.push(server)
    mainPool = (server.store as unknown as { pool: object }).pool
    return server
  }
  const post = (server: { baseUrl: string }, body: unknown) =>
    fetch(`${server.baseUrl}/runs`, {
      method: 'POST',
      headers: { ...AUTH, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    })
  /** Counts of one request: the admission part at the headers, the rest once its stream ended. */
  const measure = async (
    send: () => Promise<Response>,
    read: (response: Response) => Promise<number> = countFrames,
  ) => {
    await new Promise((r) => setTimeout(r, 100))
    counts.admission = counts.total = counts.transactions = 0
    const response = await send()
    const admission = counts.admission
    if (response.status !== 200) throw new Error(`refused: ${response.status} ${await response.text()}`)
    const frames = await read(response)
    // The run's last writes (after its terminal event was appended) land just after the stream ends.
    await new Promise((r) => setTimeout(r, 200))
    return { admission, total: counts.total, transactions: counts.transactions, frames }
  }
  try {
    const demo = await start()
    const samples: { resume: RoundTrips[]; input: RoundTrips[] } = { resume: [], input: [] }
    for (let i = 0; i < 5; i++) {
      const threadId = `rt-${randomUUID()}`
      const paused = { interrupts: [] as { id: string }[] }
      samples.input.push(
        await measure(
          () =>
            post(demo, {
              threadId,
              runId: randomUUID(),
              messages: [{ id: randomUUID(), role: 'user', content: 'deploy v2.1 to production' }],
            }),
          async (response) => {
            const body = await response.text()
            const last = JSON.parse(body.trim().split('\n\n').pop()!.split('data: ')[1]!) as {
              outcome: { interrupts: { id: string }[] }
            }
            paused.interrupts = last.outcome.interrupts
            return body.split('\n\n').length - 1
          },
        ),
      )
      samples.resume.push(
        await measure(() =>
          post(demo, {
            threadId,
            runId: randomUUID(),
            messages: [],
            resume: paused.interrupts.map((i) => ({
              interruptId: i.id,
              status: 'resolved',
              payload: { approved: true },
            })),
          }),
        ),
      )
    }
    const long = await start({ model: scriptedModel(() => ({ text }), { pacingMs: 0 }) })
    const run = await measure(() =>
      post(long, {
        threadId: `rt-${randomUUID()}`,
        runId: randomUUID(),
        messages: [{ id: randomUUID(), role: 'user', content: 'go' }],
      }),
    )
    const typical = (xs: RoundTrips[]): RoundTrips => ({
      admission: median(xs.map((x) => x.admission)),
      total: median(xs.map((x) => x.total)),
      transactions: median(xs.map((x) => x.transactions)),
    })
    return { resume: typical(samples.resume), input: typical(samples.input), run: { ...run, events: run.frames } }
  } finally {
    pg.Client.prototype.query = clientQuery
    pg.Pool.prototype.connect = poolConnect
    for (const server of servers) await server.close()
  }
}

// ---- main ----------------------------------------------------------------------------------------

console.log(
  `machine: ${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'unknown'}), node ${process.version}, PostgreSQL at ${PG_URL}`,
)
try {
  if (PARTS.has('1')) {
    console.log(`\n1) event-log append throughput, ${fmt(APPEND)} events per measurement (median of ${ROUNDS})`)
    console.log(`   ${'backend'.padEnd(12)} ${'batches of 256'.padStart(18)} ${'1 event per commit'.padStart(20)}`)
    for (const backend of backends) {
      const { store } = await backend.open()
      const batched: number[] = []
      const single: number[] = []
      for (let r = 0; r < ROUNDS; r++) {
        batched.push(await appendThroughput(store, 256, APPEND))
        single.push(await appendThroughput(store, 1, Math.min(APPEND, 2000)))
      }
      await store.close()
      console.log(
        `   ${backend.name.padEnd(12)} ${`${fmt(median(batched))} ev/s`.padStart(18)} ${`${fmt(median(single))} ev/s`.padStart(20)}`,
      )
    }
  }

  if (PARTS.has('2')) {
    console.log(
      `\n2) claim latency (store.claimBatch), ${THREADS} concurrent claims, ${ADMISSION_ROUNDS} rounds after a warm-up`,
    )
    for (const backend of backends) {
      const { store } = await backend.open()
      const samples = await claimLatency(store)
      await store.close()
      console.log(
        `   ${backend.name.padEnd(12)} p50 ${ms(percentile(samples, 50))}, p99 ${ms(percentile(samples, 99))}, max ${ms(Math.max(...samples))} (${samples.length} samples)`,
      )
    }
  }

  if (PARTS.has('3')) {
    const run = await runThroughput()
    console.log(
      `\n3) one scripted run, ${fmt(TOKENS + 4)} events, 0 ms pacing, POST /runs vs bare Hono streamSSE (median of ${ROUNDS})`,
    )
    console.log(`   bare Hono streamSSE loop      : ${fmt(run.bare)} events/s`)
    for (const [name, eps] of Object.entries(run.durable)) {
      console.log(
        `   durable log on ${name.padEnd(14)}: ${fmt(eps)} events/s = ${((eps / run.bare) * 100).toFixed(1)}% of bare (target ≥ 50%)`,
      )
    }
  }

  if (PARTS.has('3b') && BACKENDS.has('PostgreSQL')) {
    const eps = await runThroughputProcesses()
    console.log(
      `\n3b) ${RUN_STREAMS} concurrent scripted runs of ${fmt(TOKENS + 4)} events, servers in child processes (median of ${ROUNDS})`,
    )
    const floor = (name: string) =>
      eps.get(name.includes('--workers 2') ? 'bare Hono, 2 processes' : 'bare Hono, 1 process')!
    for (const [name, value] of eps) {
      const vs = name.startsWith('bare')
        ? ''
        : ` = ${((value / floor(name)) * 100).toFixed(1)}% of bare Hono with as many processes, ${((value / eps.get('bare Hono, 1 process')!) * 100).toFixed(1)}% of 1 bare process (target ≥ 50%)`
      console.log(`   ${name.padEnd(26)}: ${fmt(value)} events/s${vs}`)
    }
  }

  if (PARTS.has('4')) {
    console.log(
      `\n4) resume admission (Server-Timing), ${THREADS} concurrent threads, CLI in a child process, ${ADMISSION_ROUNDS} rounds after a warm-up`,
    )
    if (BACKENDS.has('SQLite')) {
      // With and without admission turns, in turns (a fresh file and process per turn).
      const results = await admissionSideBySide(
        [
          { name: 'SQLite', args: [] },
          { name: 'SQLite, without turns', args: ['--no-admission-turns'] },
        ],
        'SQLite',
      )
      for (const [name, samples] of results) console.log(admissionLine(name, samples, '10 ms'))
    }
    if (BACKENDS.has('PostgreSQL')) {
      const setups: AdmissionSetup[] = [
        ...PG_SETUPS.map(([name, args]) => ({ name: `PostgreSQL, ${name}`, args })),
        ...(BASELINE_CLI !== undefined
          ? [{ name: 'PostgreSQL, baseline CLI', args: [], script: BASELINE_CLI } satisfies AdmissionSetup]
          : []),
      ]
      const results = await admissionSideBySide(setups)
      const one = results.get(setups[0]!.name)!.map((s) => s.server)
      for (const [name, samples] of results) {
        const server = samples.map((s) => s.server)
        const vs =
          name === setups[0]!.name
            ? ''
            : `; ×${(percentile(server, 50) / percentile(one, 50)).toFixed(2)} p50, ×${(percentile(server, 99) / percentile(one, 99)).toFixed(2)} p99 of ${setups[0]!.name}`
        console.log(admissionLine(name, samples, '25 ms', vs))
      }
    }
  }

  if (PARTS.has('6') && BACKENDS.has('PostgreSQL')) {
    const trips = await roundTrips()
    console.log(`\n6) PostgreSQL statements (one round trip each) per request, one request at a time (median of 5)`)
    const line = (name: string, t: RoundTrips) =>
      console.log(
        `   ${name.padEnd(34)} admission ${String(t.admission).padStart(3)}, whole request ${String(t.total).padStart(4)} (${t.transactions} transactions)`,
      )
    line('resume (2 approvals, release demo)', trips.resume)
    line('new input (pauses at 2 approvals)', trips.input)
    line(`one run of ${fmt(trips.run.events)} events`, trips.run)
    console.log(`   = ${((trips.run.total / trips.run.events) * 1000).toFixed(1)} statements per 1,000 streamed events`)
  }

  if (PARTS.has('5')) {
    const idle = await idleConnections()
    console.log(
      `\n5) ${fmt(idle.connections)} idle SSE connections (tails of ${idle.threads} silent runs) held by one server process (SQLite)`,
    )
    console.log(
      `   RSS ${(idle.before / 2 ** 20).toFixed(1)} MiB before → ${(idle.after / 2 ** 20).toFixed(1)} MiB with the connections ` +
        `(+${((idle.after - idle.before) / 2 ** 10 / idle.connections).toFixed(1)} KiB each) (target ≤ 150 MB)`,
    )
  }
} finally {
  for (const schema of schemas) await adminQuery(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined)
  fs.rmSync(tmp, { recursive: true, force: true })
}
