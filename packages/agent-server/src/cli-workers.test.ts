import { spawn } from 'node:child_process'
import type { ChildProcessWithoutNullStreams } from 'node:child_process'
import fs from 'node:fs'
import http from 'node:http'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { afterEach, describe, expect, it } from 'vitest'
import type { ErrorEnvelope, ResumeEntry } from '@interlude/protocol'
import { parseCliArgs } from './cli-args.ts'
import { withDefaultUser } from './store/postgres/connection.ts'
import { quoteIdent } from './store/postgres/migrations.ts'
import {
  interruptsOf,
  newThreadId,
  postRun,
  resumeInput,
  runInput,
  tempDir,
  TOKENS,
  userMessage,
} from './test-utils/harness.ts'
import { createTestSchema, PG_URL, pgAvailable } from './test-utils/pg.ts'
import { threadKey } from './store/thread-key.ts'

const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../bin/interlude-server.js')
const DIST = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../dist/cli.js')
const children: ChildProcessWithoutNullStreams[] = []
afterEach(() => {
  for (const child of children.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
})

interface Supervisor {
  readonly child: ChildProcessWithoutNullStreams
  readonly baseUrl: string
  readonly workerPids: number[]
  /** Everything the set printed on stdout so far (the workers' JSON log lines included). */
  output(): string
  /** … and on stderr. */
  errors(): string
  exited: Promise<number | null>
}

/** `interlude-server --workers N …` in a child; resolves once the supervisor prints its ready lines. */
function launchWorkers(args: string[]): Promise<Supervisor> {
  if (!fs.existsSync(DIST))
    throw new Error(`${DIST} is missing: run "pnpm --filter @interlude/agent-server build" first`)
  const child = spawn(process.execPath, [BIN, '--port', '0', '--pacing-ms', '0', '--log-level', 'info', ...args], {
    stdio: 'pipe',
  })
  children.push(child)
  let out = ''
  let err = ''
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8')
      const ready = /(\d+) workers: pid ([\d, ]+)\nlistening on (http:\/\/127\.0\.0\.1:\d+)\n/.exec(out)
      if (ready)
        resolve({
          child,
          baseUrl: `${ready[3]!}/api/agent`,
          workerPids: ready[2]!.split(', ').map(Number),
          output: () => out,
          errors: () => err,
          exited,
        })
    })
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString('utf8')))
    void exited.then((code) => reject(new Error(`supervisor exited with ${code}: ${err}`)))
  })
}

/** One request on a connection of its own (no keep-alive), so the supervisor hands each to the next worker. */
function request(
  url: string,
  options: { method?: string; body?: unknown } = {},
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const body = options.body === undefined ? undefined : JSON.stringify(options.body)
    const req = http.request(
      url,
      {
        method: options.method ?? 'GET',
        agent: false,
        headers: {
          Authorization: `Bearer ${TOKENS.alice}`,
          Connection: 'close',
          ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}),
        },
      },
      (res) => {
        let text = ''
        res.setEncoding('utf8')
        res.on('data', (chunk: string) => (text += chunk))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }))
      },
    )
    req.on('error', reject)
    req.end(body)
  })
}

/** The pids of the workers whose request log lines match `path` (and `method`). */
function servedBy(output: string, method: string, pathname: string): Set<number> {
  const pids = new Set<number>()
  for (const line of output.split('\n')) {
    if (!line.startsWith('{')) continue
    const entry = JSON.parse(line) as { pid?: number; method?: string; path?: string }
    if (entry.method === method && entry.path === pathname && entry.pid !== undefined) pids.add(entry.pid)
  }
  return pids
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

describe('interlude-server --workers', () => {
  it('is refused where the workers could not share the store, and with a metrics port; pool sizes need PostgreSQL', () => {
    const env = { INTERLUDE_SESSION_SECRET: 'x'.repeat(32) }
    expect(parseCliArgs(['--db', 'x.db'])).toMatchObject({ workers: 1 })
    expect(parseCliArgs(['--db', 'x.db', '--shared', '--workers', '3'])).toMatchObject({ workers: 3, exclusive: false })
    expect(parseCliArgs(['--db', 'postgres://h/d', '--workers', '2'], env)).toMatchObject({ workers: 2 })
    expect(() => parseCliArgs(['--db', 'x.db', '--workers', '2'])).toThrow(/--workers needs a postgres/)
    for (const bad of ['0', '-1', '1.5', 'two', '', '65'])
      expect(() => parseCliArgs(['--db', 'x.db', '--shared', `--workers=${bad}`])).toThrow(/--workers must be/)
    expect(parseCliArgs(['--db', 'postgres://h/d', '--db-pool', '5', '--db-admission-pool', '3'], env)).toMatchObject({
      dbPool: { max: 5, admissionMax: 3 },
    })
    expect(parseCliArgs(['--db', 'postgres://h/d'], env)).toMatchObject({ dbPool: {} })
    expect(() => parseCliArgs(['--db', 'x.db', '--db-pool', '5'])).toThrow(/--db-pool needs a postgres/)
    expect(() => parseCliArgs(['--db', 'postgres://h/d', '--db-admission-pool', '0'], env)).toThrow(
      /--db-admission-pool must be/,
    )
    expect(() => parseCliArgs(['--db', 'postgres://h/d', '--workers', '2', '--metrics-port', '0'], env)).toThrow(
      /--metrics-port/,
    )
  })

  it('two workers on one port both serve, a resume race across them admits once, and SIGTERM drains both', async (ctx) => {
    if (!(await pgAvailable('--workers on PostgreSQL'))) return ctx.skip()
    const { schema, drop } = await createTestSchema()
    try {
      const set = await launchWorkers([
        '--workers',
        '2',
        '--db',
        PG_URL,
        '--db-schema',
        schema,
        '--token',
        `alice=${TOKENS.alice}`,
      ])
      expect(set.workerPids).toHaveLength(2)
      expect(new Set(set.workerPids).size).toBe(2)
      for (const pid of set.workerPids) expect(alive(pid)).toBe(true)

      // Connections are handed out round-robin: a few fresh ones reach both workers.
      for (let i = 0; i < 6; i++) expect((await request(`${set.baseUrl}/health`)).status).toBe(200)
      expect([...servedBy(set.output(), 'GET', '/api/agent/health')].sort()).toEqual([...set.workerPids].sort())

      // A paused thread, then 20 resumes of the same decision under distinct runIds over both workers.
      const threadId = newThreadId()
      const paused = await postRun(
        { baseUrl: set.baseUrl },
        runInput(threadId, [userMessage('deploy v7 to production')]),
      )
      const interrupts = interruptsOf(paused.events)
      expect(interrupts).toHaveLength(2)
      const resume: ResumeEntry[] = interrupts.map((i) => ({
        interruptId: i.id,
        status: 'resolved',
        payload: { approved: true },
      }))
      const inputs = Array.from({ length: 20 }, () => resumeInput(threadId, resume))
      const answers = await Promise.all(
        inputs.map((input) => request(`${set.baseUrl}/runs`, { method: 'POST', body: input })),
      )
      const winners = answers.filter((a) => a.status === 200)
      expect(winners).toHaveLength(1)
      const winnerRunId = inputs[answers.indexOf(winners[0]!)]!.runId
      for (const answer of answers) {
        if (answer.status === 200) continue
        expect(answer.status).toBe(409)
        expect((JSON.parse(answer.text) as ErrorEnvelope).error).toMatchObject({
          code: 'ALREADY_RESUMED',
          details: { runId: winnerRunId },
        })
      }
      expect([...servedBy(set.output(), 'POST', '/api/agent/runs')].sort()).toEqual([...set.workerPids].sort())
      // Exactly one decision record and one deployment in the shared database.
      const client = new pg.Client({ connectionString: withDefaultUser(PG_URL) })
      await client.connect()
      try {
        const s = quoteIdent(schema)
        // The store keys alice's thread by its owner (src/store/thread-key.ts).
        const key = threadKey('alice', threadId)
        const decisions = await client.query(`SELECT run_id FROM ${s}.decisions WHERE thread_id = $1`, [key])
        expect(decisions.rows).toEqual([{ run_id: winnerRunId }])
        const thread = await client.query<{ state_json: string }>(
          `SELECT state_json FROM ${s}.threads WHERE thread_id = $1`,
          [key],
        )
        expect((JSON.parse(thread.rows[0]!.state_json) as { deployments: unknown[] }).deployments).toHaveLength(1)
      } finally {
        await client.end()
      }

      // One SIGTERM to the supervisor reaches every worker; each drains, then the set exits 0.
      set.child.kill('SIGTERM')
      expect(await set.exited).toBe(0)
      for (const pid of set.workerPids) {
        expect(set.output()).toContain(`worker ${pid}: supervisor: shutting down`)
        expect(set.output()).toMatch(new RegExp(`worker ${pid}: stopped; \\d+ run\\(s\\) handed over`))
        expect(alive(pid)).toBe(false)
      }
    } finally {
      await drop()
    }
  })
})

// The SQLite variant shares one file between the workers (`--shared`).
describe('interlude-server --workers on SQLite --shared', () => {
  const tmp = tempDir()

  it('replaces a worker that dies, and a second SIGTERM ends the set at once', async () => {
    const set = await launchWorkers([
      '--workers',
      '2',
      '--db',
      path.join(tmp.dir, 'replace.db'),
      '--shared',
      '--token',
      `alice=${TOKENS.alice}`,
      '--shutdown-grace-ms',
      '600000',
      '--pacing-ms',
      '200',
    ])
    const [killed, kept] = set.workerPids as [number, number]
    process.kill(killed, 'SIGKILL')
    let replacement: number | undefined
    const deadline = Date.now() + 20_000
    while (replacement === undefined && Date.now() < deadline) {
      const match = /worker (\d+) listening\n/.exec(set.output())
      if (match) replacement = Number(match[1])
      else await new Promise((r) => setTimeout(r, 50))
    }
    expect(replacement).toBeDefined()
    expect([killed, kept]).not.toContain(replacement)
    expect(set.errors()).toContain(`worker ${killed} exited (SIGKILL)`)
    // Both the kept worker and the replacement serve.
    for (let i = 0; i < 6; i++) expect((await request(`${set.baseUrl}/health`)).status).toBe(200)
    const served = servedBy(set.output(), 'GET', '/api/agent/health')
    expect(served.has(kept) && served.has(replacement!)).toBe(true)
    // A run paced at 200 ms a token keeps the first SIGTERM's drain waiting (grace 600 s); the second ends all.
    const response = await fetch(`${set.baseUrl}/runs`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${TOKENS.alice}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(runInput(newThreadId(), [userMessage('hello there, tell me a long story')])),
    })
    expect(response.status).toBe(200)
    const slow = response.text().catch(() => undefined)
    set.child.kill('SIGTERM')
    await new Promise((r) => setTimeout(r, 300))
    set.child.kill('SIGTERM')
    expect(await set.exited).toBe(1)
    await slow
    expect(set.output()).toContain('SIGTERM again: exiting now')
    const stopDeadline = Date.now() + 10_000
    while ([kept, replacement!].some(alive) && Date.now() < stopDeadline) await new Promise((r) => setTimeout(r, 50))
    for (const pid of [kept, replacement!]) expect(alive(pid)).toBe(false)
  })

  it('serves from both workers on one shared file and exits on SIGTERM', async () => {
    const set = await launchWorkers([
      '--workers',
      '2',
      '--db',
      path.join(tmp.dir, 'w.db'),
      '--shared',
      '--token',
      `alice=${TOKENS.alice}`,
    ])
    for (let i = 0; i < 6; i++) expect((await request(`${set.baseUrl}/health`)).status).toBe(200)
    expect([...servedBy(set.output(), 'GET', '/api/agent/health')].sort()).toEqual([...set.workerPids].sort())
    set.child.kill('SIGTERM')
    expect(await set.exited).toBe(0)
    for (const pid of set.workerPids) expect(alive(pid)).toBe(false)
    tmp.cleanup()
  })
})
