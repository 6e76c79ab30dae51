import { spawn } from 'node:child_process'
import type { ChildProcessWithoutNullStreams } from 'node:child_process'
import fs from 'node:fs'
import http from 'node:http'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { expect } from 'vitest'
import { newThreadId, runInput, userMessage } from './harness.ts'

/**
 * The real CLI (the built `bin/interlude-server.js`) in a child process, for attacks run as bounded loops on loopback:
 * its RSS is read from /proc, its open-file limit set with `ulimit -n`. Tokens come from `INTERLUDE_TOKENS`.
 */

const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../bin/interlude-server.js')
const DIST = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../dist/cli.js')
const children: ChildProcessWithoutNullStreams[] = []

/** Bearer secrets of alice, bob and ten more principals p0…p9 (long enough to start without a warning). */
export const SECRETS: Record<string, string> = Object.fromEntries(
  ['alice', 'bob', ...Array.from({ length: 10 }, (_, i) => `p${i}`)].map((name) => [name, `${name}-secret-token-xyz`]),
)
export const bearer = (name: string) => ({ Authorization: `Bearer ${SECRETS[name]!}` })

export interface CliChild {
  readonly port: number
  readonly url: string
  readonly child: ChildProcessWithoutNullStreams
  /** Everything the CLI wrote to stdout so far (its JSON log lines). */
  stdout(): string
  rssMb(): number
}

/** Kills every CLI launched here that is still running (an `afterEach`). */
export function stopChildren(): void {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL')
}

export interface LaunchOptions {
  /** `ulimit -n` of the process. @default 4096 */
  readonly nofile?: number
  /** `false`: no bearer tokens (anonymous-session cookies). @default true */
  readonly tokens?: boolean
}

/** The CLI on a fresh SQLite file in `dir`; resolves once it listens. */
export function launchCli(dir: string, args: readonly string[], options: LaunchOptions = {}): Promise<CliChild> {
  const { nofile = 4096, tokens = true } = options
  if (!fs.existsSync(DIST)) throw new Error(`${DIST} is missing: run "pnpm --filter @interlude/agent-server build"`)
  const db = path.join(dir, `${newThreadId()}.db`)
  const command = [process.execPath, BIN, '--port', '0', '--db', db, '--pacing-ms', '0', ...args]
  const child = spawn('bash', ['-c', `ulimit -n ${nofile} && exec "$@"`, 'bash', ...command], {
    stdio: 'pipe',
    env: {
      ...process.env,
      INTERLUDE_TOKENS: tokens
        ? Object.entries(SECRETS)
            .map(([n, s]) => `${n}=${s}`)
            .join(',')
        : '',
    },
  })
  children.push(child)
  return listening(child).then(({ url, stdout }) => ({
    url,
    port: Number(new URL(url).port),
    child,
    stdout,
    rssMb: () => {
      const status = fs.readFileSync(`/proc/${child.pid!}/status`, 'utf8')
      return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) / 1024
    },
  }))
}

/**
 * Resolves once a CLI child prints its `listening on http://127.0.0.1:<port>` line, with that URL and its stdout so far
 * (and after); rejects with its stderr if it exits first.
 */
export function listening(child: ChildProcessWithoutNullStreams): Promise<{ url: string; stdout: () => string }> {
  return new Promise((resolve, reject) => {
    let out = ''
    let err = ''
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8')
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+)\n/.exec(out)
      if (match) resolve({ url: match[1]!, stdout: () => out })
    })
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString('utf8')))
    child.once('exit', (code) => reject(new Error(`CLI exited with ${code}: ${err}`)))
  })
}

/** One request on a fresh connection (no pooled keep-alive socket the server may be closing meanwhile). */
export function request(
  server: CliChild,
  method: string,
  urlPath: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; text: string; headers: http.IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port: server.port, method, path: urlPath, headers, agent: false },
      (res) => {
        let text = ''
        res.setEncoding('utf8')
        res.on('data', (chunk: string) => (text += chunk))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text, headers: res.headers }))
      },
    )
    req.on('error', reject)
    req.end(body)
  })
}

/** Bob (another principal than any attacker) starts a run, and it finishes. */
export async function bobRuns(server: CliChild): Promise<void> {
  const body = JSON.stringify(runInput(newThreadId(), [userMessage('hello')]))
  const answer = await request(
    server,
    'POST',
    '/api/agent/runs',
    { 'Content-Type': 'application/json', ...bearer('bob') },
    body,
  )
  expect(answer.status).toBe(200)
  expect(answer.text).toContain('RUN_FINISHED')
}
