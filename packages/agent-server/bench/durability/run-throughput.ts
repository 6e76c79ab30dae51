/** Parts 3 and 3b of the durability bench: a run's events/s beside bare Hono, in this process and through the CLI. */
import { spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import path from 'node:path'
import type { AddressInfo } from 'node:net'
import { serve } from '@hono/node-server'
import { Hono } from 'hono'
import { streamSSE } from 'hono/streaming'
import { EventType } from '@interlude/protocol'
import { scriptedModel } from '../../src/models/scripted.ts'
import { countFrames, median } from '../bench-utils.ts'
import { BASELINE_CLI, launched, spawnCli } from '../cli-process.ts'
import type { ServerProcess } from '../cli-process.ts'
import { startServer } from '../../src/server.ts'
import { NO_PRINCIPAL_QUOTAS } from '../../src/config/limits.ts'
import { PG_URL, TOKENS, ROUNDS, AUTH, ROOT, tmp, newSchema, allBackends } from './setup.ts'

// ---- 3. run events/s vs bare Hono ----------------------------------------------------------------

export async function bareHonoServer() {
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

export async function runThroughput(): Promise<{ bare: number; durable: Record<string, number> }> {
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
export const RUN_STREAMS = Number(process.env.BENCH_RUN_STREAMS ?? 2)

export interface RunSetup {
  readonly name: string
  start(): Promise<ServerProcess>
}

/** Events/s over `RUN_STREAMS` concurrent runs (all frames / wall time until the last stream ends). */
export async function concurrentRuns(baseUrl: string): Promise<number> {
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
export async function runThroughputProcesses(): Promise<Map<string, number>> {
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
