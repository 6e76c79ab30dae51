/**
 * Durability benchmarks (not tests). Run: pnpm --filter @interlude/agent-server bench:durability
 * (builds are needed for part 5: pnpm -r --filter "./packages/**" run build).
 *
 * Side by side in one run, SQLite and PostgreSQL:
 * 1. Event-log append throughput (events/s): batches of 256 (what a run writes) and single-event commits.
 * 2. Claim latency (store.claimBatch) p50/p99, 100 concurrent claims on 100 paused threads.
 * 3. Events/s of one scripted run through POST /runs with the durable log vs a bare Hono streamSSE loop.
 * 4. Resume admission p50/p99 (Server-Timing) at 100 concurrent threads, the CLI in a child process.
 * 5. RSS of one server process holding 1,000 idle SSE connections (tails of silent runs).
 *
 * Env: BENCH_PARTS (e.g. "1,4"; default all), BENCH_PG_URL (default INTERLUDE_TEST_PG_URL or postgres://127.0.0.1:5432/postgres), BENCH_APPEND (50000),
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
import { launched, spawnCli } from './cli-process.ts'
import { startServer } from '../src/server.ts'
import { NO_PRINCIPAL_QUOTAS } from '../src/core/limits.ts'
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
const PARTS = new Set((process.env.BENCH_PARTS ?? '1,2,3,4,5').split(',').map((p) => p.trim()))
const BACKENDS = new Set((process.env.BENCH_BACKENDS ?? 'SQLite,PostgreSQL').split(',').map((p) => p.trim()))
const AUTH = { Authorization: 'Bearer bench-secret' }
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

// ---- 4. admission through the CLI ----------------------------------------------------------------

/** The CLI with the benchmarks' bearer token. */
const spawnBenchCli = (args: string[]) => spawnCli(['--token', 'bench=bench-secret', ...args])

async function admissionLatency(cliArgs: string[]): Promise<number[]> {
  const server = await spawnBenchCli(cliArgs)
  const post = (body: unknown) =>
    fetch(`${server.baseUrl}/runs`, {
      method: 'POST',
      headers: { ...AUTH, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    })
  const samples: number[] = []
  try {
    for (let round = 0; round < ADMISSION_ROUNDS + 1; round++) {
      const times = (await admissionRound(post, THREADS)).map((sample) => sample.server)
      if (round > 0) samples.push(...times)
    }
  } finally {
    await server.stop()
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

  if (PARTS.has('4')) {
    console.log(
      `\n4) resume admission (Server-Timing), ${THREADS} concurrent threads, CLI in a child process, ${ADMISSION_ROUNDS} rounds after a warm-up`,
    )
    for (const backend of backends) {
      const { store, cliArgs } = await backend.open()
      await store.close()
      const samples = await admissionLatency(cliArgs)
      const target = backend.name === 'SQLite' ? 10 : 25
      console.log(
        `   ${backend.name.padEnd(12)} p50 ${ms(percentile(samples, 50))}, p99 ${ms(percentile(samples, 99))}, max ${ms(Math.max(...samples))} (target p99 ≤ ${target} ms)`,
      )
    }
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
