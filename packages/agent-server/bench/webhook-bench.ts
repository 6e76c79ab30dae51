/**
 * Webhook delivery latency (not a test). Run from packages/agent-server: node --import tsx bench/webhook-bench.ts
 *
 * Per delivery: the time from the commit of the change that wrote its outbox row (`finishRun` with `outbox`, as the
 * core writes `run.failed`) to its receipt by a local `node:http` receiver on 127.0.0.1 (target p99 ≤ 1 s,
 * docs/approvals.md, "Webhooks"). Three ways rows reach the sender:
 * 1. wake: one commit every BENCH_PACE_MS, each followed by `wake()` (what the core does after a commit);
 * 2. burst: BENCH_DELIVERIES commits back to back, each followed by `wake()` and one turn of the event loop (as
 *    commits from separate requests and runs would interleave with I/O; SQLite commits are synchronous);
 * 3. poll only: paced commits without `wake()` (rows written by another replica), found by the 500 ms poll.
 * And the sender's throughput: BENCH_DELIVERIES rows already waiting when it starts (a restart after an outage).
 *
 * Env: BENCH_DELIVERIES (500), BENCH_PACE_MS (2), BENCH_BACKENDS (SQLite,PostgreSQL), BENCH_PG_URL (default
 * INTERLUDE_TEST_PG_URL or postgres://127.0.0.1:5432/postgres; its part is skipped when unreachable).
 */
import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import pg from 'pg'
import { withDefaultUser } from '../src/store/postgres/connection.ts'
import { quoteIdent } from '../src/store/postgres/migrations.ts'
import { createPostgresStore } from '../src/store/postgres/postgres-store.ts'
import { createSqliteStore } from '../src/store/sqlite/sqlite-store.ts'
import type { Store } from '../src/store/store.ts'
import { commitFailedRun } from '../src/test-utils/webhook-outbox.ts'
import { resolveWebhookEndpoints } from '../src/webhooks/webhook-config.ts'
import { WebhookSender } from '../src/webhooks/webhook-sender.ts'
import { percentile } from './bench-utils.ts'

const DELIVERIES = Number(process.env.BENCH_DELIVERIES ?? 500)
const PACE_MS = Number(process.env.BENCH_PACE_MS ?? 2)
const BACKENDS = new Set((process.env.BENCH_BACKENDS ?? 'SQLite,PostgreSQL').split(',').map((b) => b.trim()))
const PG_URL = process.env.BENCH_PG_URL ?? process.env.INTERLUDE_TEST_PG_URL ?? 'postgres://127.0.0.1:5432/postgres'
const MODES = ['wake', 'burst', 'poll only'] as const
const secret = `whsec_${randomBytes(32).toString('base64')}`
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** A receiver that notes when each `webhook-id` first arrived and answers 204. */
async function receiver() {
  const arrived = new Map<string, number>()
  let waiter: { count: number; resolve: () => void } | undefined
  const server = http.createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      const id = String(req.headers['webhook-id'])
      if (!arrived.has(id)) arrived.set(id, performance.now())
      res.writeHead(204).end()
      if (waiter && arrived.size >= waiter.count) waiter.resolve()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    arrived,
    until: (count: number) =>
      new Promise<void>((resolve) => {
        if (arrived.size >= count) resolve()
        else waiter = { count, resolve }
      }),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

async function scenario(store: Store, mode: (typeof MODES)[number], count: number): Promise<number[]> {
  const r = await receiver()
  const endpoints = resolveWebhookEndpoints([{ url: r.url, secret }], {})
  const sender = new WebhookSender({
    store,
    endpoints,
    logError: (message) => console.error(message),
    ...(process.env.BENCH_CONCURRENCY ? { concurrency: Number(process.env.BENCH_CONCURRENCY) } : {}),
  })
  sender.start()
  const committed = new Map<string, number>()
  for (let i = 0; i < count; i++) {
    const [row] = await commitFailedRun(store, endpoints)
    committed.set(row!.deliveryId, performance.now())
    if (mode !== 'poll only') sender.wake()
    await (mode === 'burst' ? new Promise(setImmediate) : sleep(PACE_MS))
  }
  await r.until(count)
  await sender.stop()
  await r.close()
  return [...committed].map(([id, at]) => r.arrived.get(id)! - at)
}

/** Deliveries per second draining a backlog of `count` rows written before the sender starts. */
async function drain(store: Store, count: number): Promise<number> {
  const r = await receiver()
  const endpoints = resolveWebhookEndpoints([{ url: r.url, secret }], {})
  for (let i = 0; i < count; i++) await commitFailedRun(store, endpoints)
  const sender = new WebhookSender({ store, endpoints, logError: (message) => console.error(message) })
  const started = performance.now()
  sender.start()
  await r.until(count)
  const seconds = (performance.now() - started) / 1000
  await sender.stop()
  await r.close()
  return count / seconds
}

async function backends(): Promise<{ name: string; store: Store; dispose(): Promise<void> }[]> {
  const list = []
  if (BACKENDS.has('SQLite')) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'interlude-webhook-bench-'))
    const store = createSqliteStore(path.join(dir, 'bench.db'))
    list.push({
      name: 'SQLite',
      store,
      dispose: async () => (await store.close(), fs.rmSync(dir, { recursive: true })),
    })
  }
  if (BACKENDS.has('PostgreSQL')) {
    const schema = `interlude_bench_${randomBytes(6).toString('hex')}`
    const admin = new pg.Client({ connectionString: withDefaultUser(PG_URL), connectionTimeoutMillis: 3000 })
    try {
      await admin.connect()
      await admin.query(`CREATE SCHEMA ${quoteIdent(schema)}`)
      const store = await createPostgresStore({ connectionString: PG_URL, schema })
      list.push({
        name: 'PostgreSQL',
        store,
        dispose: async () => {
          await store.close()
          await admin.query(`DROP SCHEMA ${quoteIdent(schema)} CASCADE`)
          await admin.end()
        },
      })
    } catch (error) {
      console.warn(`PostgreSQL skipped (${PG_URL} unreachable): ${(error as Error).message}`)
      await admin.end().catch(() => undefined)
    }
  }
  return list
}

const ms = (n: number) => `${n.toFixed(1)} ms`
console.log(`webhook delivery, commit → receipt at a local receiver (${DELIVERIES} deliveries, target p99 ≤ 1000 ms)`)
for (const backend of await backends()) {
  for (const mode of MODES) {
    const samples = await scenario(backend.store, mode, DELIVERIES)
    const label = mode === 'burst' ? mode : `${mode}, paced`
    console.log(
      `  ${backend.name.padEnd(11)} ${label.padEnd(17)} p50 ${ms(percentile(samples, 50))}, p99 ${ms(percentile(samples, 99))}, max ${ms(Math.max(...samples))} (${samples.length} samples)`,
    )
  }
  const rate = await drain(backend.store, DELIVERIES)
  console.log(`  ${backend.name.padEnd(11)} ${'backlog drain'.padEnd(17)} ${Math.round(rate)} deliveries/s`)
  await backend.dispose()
}
