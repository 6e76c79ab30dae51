/**
 * Server benchmarks (not tests). Run: pnpm --filter @interlude/agent-server bench
 *
 * 1. Events/s of one scripted run (≥ 100k events, 0 ms pacing) through POST /runs — with the
 *    durable SQLite event log — vs a bare Hono streamSSE loop writing the same frames.
 * 2. Resume admission latency (p50/p99) with 100 concurrent threads on SQLite.
 *
 * For (1) both servers run in this process on 127.0.0.1 and are read by fetch in the same
 * process, so client-side parsing costs the same on both sides of the comparison. For (2) the
 * server is the real CLI in a child process and this process is the 100 concurrent clients.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { randomUUID } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import { serve } from '@hono/node-server'
import { Hono } from 'hono'
import { streamSSE } from 'hono/streaming'
import { EventType } from '@interlude/protocol'
import { scriptedModel } from '../src/models/scripted.ts'
import { startServer } from '../src/server.ts'
import { NO_PRINCIPAL_QUOTAS } from '../src/config/limits.ts'
import { admissionRound, countFrames, fmt, median, percentile } from './bench-utils.ts'
import { spawnCli } from './cli-process.ts'

const TOKENS = Number(process.env.BENCH_TOKENS ?? 100_000)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)
const THREADS = Number(process.env.BENCH_THREADS ?? 100)
const ADMISSION_ROUNDS = Number(process.env.BENCH_ADMISSION_ROUNDS ?? 5)
const AUTH = { Authorization: 'Bearer bench-secret' }

/** The same event JSON the scripted run produces, for the bare loop. */
function sameEvents(): string[] {
  const threadId = 'bare-thread'
  const runId = 'bare-run'
  const messageId = `msg_${randomUUID()}`
  const events: string[] = [JSON.stringify({ type: EventType.RUN_STARTED, threadId, runId })]
  events.push(JSON.stringify({ type: EventType.TEXT_MESSAGE_START, messageId, role: 'assistant' }))
  for (let i = 0; i < TOKENS; i++)
    events.push(JSON.stringify({ type: EventType.TEXT_MESSAGE_CONTENT, messageId, delta: 'tok ' }))
  events.push(JSON.stringify({ type: EventType.TEXT_MESSAGE_END, messageId }))
  events.push(JSON.stringify({ type: EventType.RUN_FINISHED, threadId, runId, outcome: { type: 'success' } }))
  return events
}

async function bareHonoServer(events: string[]) {
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

async function eventsPerSecond() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'interlude-bench-'))
  const text = 'tok '.repeat(TOKENS)
  const agent = { model: scriptedModel(() => ({ text }), { pacingMs: 0 }) }
  const server = await startServer({
    dbPath: path.join(dir, 'bench.db'),
    tokens: { bench: 'bench-secret' },
    agent,
    // The bench's one principal carries every client's load.
    limits: { ...NO_PRINCIPAL_QUOTAS },
  })
  const bare = await bareHonoServer(sameEvents())
  const ours: number[] = []
  const theirs: number[] = []
  let oursCount = 0
  let theirsCount = 0
  try {
    for (let round = 0; round < ROUNDS + 1; round++) {
      // Alternate the order so neither side always runs on a warmer process.
      const order = round % 2 === 0 ? ['ours', 'bare'] : ['bare', 'ours']
      for (const which of order) {
        const started = performance.now()
        if (which === 'ours') {
          const body = JSON.stringify({
            threadId: `bench-${randomUUID()}`,
            runId: randomUUID(),
            messages: [{ id: randomUUID(), role: 'user', content: 'go' }],
          })
          const response = await fetch(`${server.baseUrl}/runs`, {
            method: 'POST',
            headers: { ...AUTH, 'Content-Type': 'application/json' },
            body,
          })
          oursCount = await countFrames(response)
          if (round > 0) ours.push(oursCount / ((performance.now() - started) / 1000))
        } else {
          const response = await fetch(bare.url, { method: 'POST' })
          theirsCount = await countFrames(response)
          if (round > 0) theirs.push(theirsCount / ((performance.now() - started) / 1000))
        }
      }
    }
  } finally {
    await bare.close()
    await server.close()
    fs.rmSync(dir, { recursive: true, force: true })
  }
  return { oursCount, theirsCount, ours: median(ours), bare: median(theirs), oursAll: ours, bareAll: theirs }
}

async function admissionLatency() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'interlude-bench-'))
  // The real CLI in a child process: the server gets its own core; clients are remote.
  const server = await spawnCli(['--db', path.join(dir, 'admission.db'), '--token', 'bench=bench-secret'])
  const client: number[] = []
  const serverSide: number[] = []
  const turns: number[] = []
  const post = (body: unknown) =>
    fetch(`${server.baseUrl}/runs`, {
      method: 'POST',
      headers: { ...AUTH, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    })
  try {
    for (let round = 0; round < ADMISSION_ROUNDS + 1; round++) {
      // Pause THREADS threads, then resume all of them at once.
      const samples = await admissionRound(post, THREADS)
      if (round === 0) continue // warm-up
      for (const s of samples) {
        client.push(s.elapsed)
        serverSide.push(s.server)
        turns.push(s.turn)
      }
    }
  } finally {
    await server.stop()
    fs.rmSync(dir, { recursive: true, force: true })
  }
  return {
    samples: client.length,
    serverP50: percentile(serverSide, 50),
    serverP99: percentile(serverSide, 99),
    serverP90: percentile(serverSide, 90),
    serverMax: Math.max(...serverSide),
    turnP50: percentile(turns, 50),
    turnP99: percentile(turns, 99),
    clientP50: percentile(client, 50),
    clientP99: percentile(client, 99),
  }
}

console.log(`machine: ${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'unknown'}), node ${process.version}`)
const eps = await eventsPerSecond()
console.log(
  `\n1) one scripted run, ${fmt(eps.oursCount)} events, 0 ms pacing, median of ${ROUNDS} rounds (after 1 warm-up)`,
)
console.log(`   POST /runs (SQLite event log) : ${fmt(eps.ours)} events/s   [${eps.oursAll.map(fmt).join(', ')}]`)
console.log(
  `   bare Hono streamSSE loop      : ${fmt(eps.bare)} events/s   [${eps.bareAll.map(fmt).join(', ')}] (${fmt(eps.theirsCount)} frames)`,
)
console.log(`   ratio                          : ${((eps.ours / eps.bare) * 100).toFixed(1)}% (target ≥ 60%)`)
const adm = await admissionLatency()
console.log(
  `\n2) resume admission, ${THREADS} concurrent threads on SQLite, ${adm.samples} samples (after 1 warm-up round)`,
)
console.log(
  `   admission (Server-Timing)     : p50 ${adm.serverP50.toFixed(2)} ms, p90 ${adm.serverP90.toFixed(2)} ms, p99 ${adm.serverP99.toFixed(2)} ms, max ${adm.serverMax.toFixed(2)} ms (target p99 ≤ 10 ms)`,
)
console.log(
  `   wait for a turn (Server-Timing): p50 ${adm.turnP50.toFixed(2)} ms, p99 ${adm.turnP99.toFixed(2)} ms (before the admission, see bench/README.md#admission-turns)`,
)
console.log(
  `   client time to headers         : p50 ${adm.clientP50.toFixed(2)} ms, p99 ${adm.clientP99.toFixed(2)} ms`,
)
