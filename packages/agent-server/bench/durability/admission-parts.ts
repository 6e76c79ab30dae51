/** Parts 4 and 5 of the durability bench: resume admission through the CLI, and idle SSE connections' memory. */
import { spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import fs from 'node:fs'
import http from 'node:http'
import path from 'node:path'
import { admissionRound, percentile } from '../bench-utils.ts'
import { launched, spawnCli } from '../cli-process.ts'
import { THREADS, ADMISSION_ROUNDS, IDLE, AUTH, ROOT, ms, tmp, allBackends } from './setup.ts'

// ---- 4. admission through the CLI ----------------------------------------------------------------

/** One resume of an admission round: the server's admission, its wait for a turn, the client's time to headers. */
export type AdmissionSample = Awaited<ReturnType<typeof admissionRound>>[number]

/** `rounds` measured admission rounds (after one warm-up round) on a fresh CLI process (set). */
export async function admissionLatency(
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
export function admissionLine(name: string, samples: readonly AdmissionSample[], target: string, vs = ''): string {
  const server = samples.map((s) => s.server)
  const client = samples.map((s) => s.elapsed)
  const turn = samples.map((s) => s.turn)
  return (
    `   ${name.padEnd(30)} p50 ${ms(percentile(server, 50))}, p99 ${ms(percentile(server, 99))}, max ${ms(Math.max(...server))} (target p99 ≤ ${target}${vs})\n` +
    `   ${''.padEnd(30)} wait for a turn p99 ${ms(percentile(turn, 99))}; client, request to headers: p50 ${ms(percentile(client, 50))}, p99 ${ms(percentile(client, 99))}`
  )
}

export interface AdmissionSetup {
  readonly name: string
  readonly args: readonly string[]
  readonly script?: string
}

/**
 * PostgreSQL admission in several set-ups measured in turns (one fresh process set and one measured round each per
 * turn, the order rotating), so that the load of other work on the machine falls on all of them alike: one process,
 * `--workers 2`, and — with BENCH_BASELINE_CLI — another checkout's CLI as the "before" of a change.
 */
export async function admissionSideBySide(
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

export function rssOf(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8')
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) * 1024
}

export async function idleConnections(): Promise<{
  before: number
  after: number
  connections: number
  threads: number
}> {
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
