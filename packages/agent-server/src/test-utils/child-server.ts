import { spawn } from 'node:child_process'
import type { ChildProcessWithoutNullStreams } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
/** The test-only server script (built server + blocking hooks); see its header. */
export const CRASH_SERVER = path.join(ROOT, 'test/fixtures/crash-server.mjs')
const DIST = path.join(ROOT, 'dist/index.js')

export interface ChildServer {
  readonly url: string
  readonly baseUrl: string
  readonly child: ChildProcessWithoutNullStreams
  /** SIGKILL, then wait for the exit. */
  kill(): Promise<void>
  /** SIGTERM (graceful), then wait for the exit code. */
  stop(): Promise<number | null>
}

const running = new Set<ChildProcessWithoutNullStreams>()

/** Starts `node <script> …args` and resolves once it prints `listening on http://HOST:PORT`. */
export function launchChild(script: string, args: readonly string[]): Promise<ChildServer> {
  if (!fs.existsSync(DIST))
    throw new Error(`${DIST} is missing: run "pnpm -r --filter './packages/**' run build" first`)
  const child = spawn(process.execPath, [script, ...args], { stdio: 'pipe' })
  running.add(child)
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      running.delete(child)
      resolve(code)
    }),
  )
  return new Promise((resolve, reject) => {
    let out = ''
    let err = ''
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8')
      const match = /listening on (http:\/\/[^\s]+)\n/.exec(out)
      if (match) {
        resolve({
          url: match[1]!,
          baseUrl: `${match[1]!}/api/agent`,
          child,
          kill: async () => {
            child.kill('SIGKILL')
            await exited
          },
          stop: async () => {
            child.kill('SIGTERM')
            return exited
          },
        })
      }
    })
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString('utf8')))
    void exited.then((code) =>
      reject(new Error(`${path.basename(script)} exited with ${code} before listening: ${err}`)),
    )
  })
}

/** Kills every child still running (afterEach/afterAll). */
export function killChildren(): void {
  for (const child of running) child.kill('SIGKILL')
}

/** Polls `probe` until it returns a truthy value; fails after the deadline (no fixed sleeps). */
export async function until<T>(probe: () => T | Promise<T>, what: string, timeoutMs = 15_000): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (value) return value as NonNullable<T>
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 15))
  }
}
