/**
 * Time from SIGKILL to the continuation's first event (docs/architecture.md, "Durable continuation"): a resume is
 * admitted on a server running the real CLI (built dist, paced scripted model so the turn is in flight), the process
 * is killed 5 ms later, and a client that reconnects at once with `Last-Event-ID` measures when the first event of
 * the continuation arrives:
 *
 * - SQLite, restart: the CLI is started again on the same file (exclusive mode continues at startup); the figure
 *   includes the process start. Its own part (until `listening on`) is printed beside it.
 * - PostgreSQL, the other replica: a second CLI on the same schema takes the run over once the lease ends and its
 *   recovery sweep runs (every `min(4 × poll, lease / 2)`); `--run-lease-ms` sets the lease (BENCH_LEASE_MS).
 *
 *   pnpm -r --filter "./packages/**" run build
 *   node --import tsx bench/takeover-bench.ts
 *   # env: BENCH_TRIALS (10), BENCH_LEASE_MS (1000), BENCH_BACKENDS (SQLite,PostgreSQL), BENCH_PG_URL
 */
import type { ChildProcess } from 'node:child_process'
import { spawn } from 'node:child_process'
import { randomBytes, randomUUID } from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import type { Interrupt } from '@interlude/protocol'
import { withDefaultUser } from '../src/store/postgres/connection.ts'
import { median, percentile } from './bench-utils.ts'

const TRIALS = Number(process.env.BENCH_TRIALS ?? 10)
const LEASE_MS = Number(process.env.BENCH_LEASE_MS ?? 1000)
const BACKENDS = new Set((process.env.BENCH_BACKENDS ?? 'SQLite,PostgreSQL').split(',').map((b) => b.trim()))
const PG_URL = process.env.BENCH_PG_URL ?? process.env.INTERLUDE_TEST_PG_URL ?? 'postgres://127.0.0.1:5432/postgres'
const BIN = fileURLToPath(new URL('../bin/interlude-server.js', import.meta.url))
const AUTH = { Authorization: 'Bearer bench-secret' }
const KILL_AFTER_MS = 5

interface Cli {
  readonly baseUrl: string
  readonly child: ChildProcess
  /** ms from spawn to `listening on`. */
  readonly startMs: number
}

function startCli(args: readonly string[]): Promise<Cli> {
  const started = performance.now()
  const child = spawn(
    process.execPath,
    [BIN, '--port', '0', '--token', 'bench=bench-secret', '--pacing-ms', '20', ...args],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  )
  return new Promise((resolve, reject) => {
    let out = ''
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8')
      const match = /listening on (\S+)\n/.exec(out)
      if (match) resolve({ baseUrl: `${match[1]!}/api/agent`, child, startMs: performance.now() - started })
    })
    child.once('exit', (code) => reject(new Error(`interlude-server exited with ${code}`)))
  })
}

const killed = (cli: Cli) =>
  new Promise<void>((resolve) => {
    cli.child.once('exit', () => resolve())
    cli.child.kill('SIGKILL')
  })

const post = (cli: Cli, body: unknown) =>
  fetch(`${cli.baseUrl}/runs`, {
    method: 'POST',
    headers: { ...AUTH, 'Content-Type': 'application/json', Accept: 'text/event-stream' },
    body: JSON.stringify(body),
  })

/** A paused release-assistant thread (a batch of two approvals). */
async function paused(cli: Cli): Promise<{ threadId: string; interrupts: Interrupt[] }> {
  const threadId = `takeover-${randomUUID()}`
  const response = await post(cli, {
    threadId,
    runId: randomUUID(),
    messages: [{ id: randomUUID(), role: 'user', content: 'deploy v3 to production' }],
  })
  const text = await response.text()
  const last = JSON.parse(text.trim().split('\n\n').pop()!.split('data: ')[1]!) as {
    outcome: { interrupts: Interrupt[] }
  }
  return { threadId, interrupts: last.outcome.interrupts }
}

/** Admits the resume, reads its stream until the kill, SIGKILLs the process 5 ms after admission. */
async function resumeAndKill(
  cli: Cli,
  threadId: string,
  interrupts: Interrupt[],
): Promise<{ at: number; last: number }> {
  const response = await post(cli, {
    threadId,
    runId: randomUUID(),
    messages: [],
    resume: interrupts.map((i) => ({ interruptId: i.id, status: 'resolved', payload: { approved: true } })),
  })
  if (response.status !== 200) throw new Error(`resume answered ${response.status}`)
  let last = 0
  const reader = response.body!.getReader()
  const reading = (async () => {
    let buffer = ''
    try {
      for (;;) {
        const { done, value } = await reader.read()
        if (done) return
        buffer += new TextDecoder().decode(value)
        for (const m of buffer.matchAll(/^id: (\d+)$/gm)) last = Math.max(last, Number(m[1]))
      }
    } catch {
      // the connection broke with the process
    }
  })()
  await new Promise((resolve) => setTimeout(resolve, KILL_AFTER_MS))
  const at = performance.now()
  await killed(cli)
  await reading
  return { at, last }
}

/** Reconnects with Last-Event-ID until the first event after `last` arrives; answers when it did. */
async function firstEventAfter(cli: Cli, threadId: string, last: number): Promise<number> {
  for (;;) {
    const response = await fetch(`${cli.baseUrl}/threads/${threadId}/events`, {
      headers: { ...AUTH, 'Last-Event-ID': String(last) },
    })
    const reader = response.body!.getReader()
    const { done, value } = await reader.read()
    const now = performance.now()
    await reader.cancel().catch(() => undefined)
    if (!done && /^id: \d+$/m.test(new TextDecoder().decode(value))) return now
    // The run had already ended before the kill: nothing after `last`.
    if (done) return Number.NaN
  }
}

function report(name: string, takeover: number[], extra: string): void {
  const valid = takeover.filter((t) => Number.isFinite(t))
  console.log(
    `${name}: SIGKILL → first continued event, median ${median(valid).toFixed(0)} ms, p90 ${percentile(valid, 90).toFixed(0)} ms ` +
      `(${valid.length} of ${takeover.length} trials continued a run in flight)${extra}`,
  )
}

async function sqlite(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'interlude-takeover-'))
  const db = path.join(dir, 'takeover.db')
  const takeover: number[] = []
  const starts: number[] = []
  let cli = await startCli(['--db', db])
  try {
    for (let trial = 0; trial < TRIALS; trial++) {
      const { threadId, interrupts } = await paused(cli)
      const { at, last } = await resumeAndKill(cli, threadId, interrupts)
      cli = await startCli(['--db', db])
      starts.push(cli.startMs)
      takeover.push((await firstEventAfter(cli, threadId, last)) - at)
    }
  } finally {
    cli.child.kill('SIGKILL')
    fs.rmSync(dir, { recursive: true, force: true })
  }
  report(
    'SQLite, restart',
    takeover,
    `; of which the process start (until "listening on"): median ${median(starts).toFixed(0)} ms`,
  )
}

async function postgres(): Promise<void> {
  const schema = `interlude_bench_${randomBytes(5).toString('hex')}`
  const admin = new pg.Client({ connectionString: withDefaultUser(PG_URL) })
  await admin.connect()
  await admin.query(`CREATE SCHEMA "${schema}"`)
  const args = ['--db', PG_URL, '--db-schema', schema, '--run-lease-ms', String(LEASE_MS)]
  const takeover: number[] = []
  let live = await startCli(args)
  let other = await startCli(args)
  try {
    for (let trial = 0; trial < TRIALS; trial++) {
      const { threadId, interrupts } = await paused(live)
      const { at, last } = await resumeAndKill(live, threadId, interrupts)
      const replacement = startCli(args)
      takeover.push((await firstEventAfter(other, threadId, last)) - at)
      live = other
      other = await replacement
    }
  } finally {
    live.child.kill('SIGKILL')
    other.child.kill('SIGKILL')
    await admin.query(`DROP SCHEMA "${schema}" CASCADE`)
    await admin.end()
  }
  report(`PostgreSQL, the other replica (lease ${LEASE_MS} ms)`, takeover, '')
}

if (BACKENDS.has('SQLite')) await sqlite()
if (BACKENDS.has('PostgreSQL')) await postgres()
