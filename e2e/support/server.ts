import type { ChildProcess } from 'node:child_process'
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SERVER_BIN, WORKBENCH_DIST } from './paths.ts'

export interface ServerOptions {
  /** SQLite file; a fresh temporary one by default. */
  readonly dbPath?: string
  /** 0 picks a free port. */
  readonly port?: number
  /** `--interrupt-ttl` in seconds. */
  readonly interruptTtl?: number
  /** Scripted model token pacing in ms. @default 0 (fast tests) */
  readonly pacingMs?: number
  readonly extraArgs?: readonly string[]
  /** `--agent <module>` instead of the scripted release assistant (the module brings its own model). */
  readonly agentModule?: string
}

export interface RunningServer {
  readonly url: string
  readonly port: number
  readonly dbPath: string
  /** Everything the process printed (for failure messages). */
  readonly output: () => string
  /** Graceful stop (SIGTERM, then SIGKILL after 5 s). */
  stop(): Promise<void>
  /** SIGKILL: the process dies mid-whatever, like a crash. */
  kill(): Promise<void>
}

const READY = /listening on (http:\/\/[^\s]+)/

/**
 * Starts the real `interlude-server` CLI as a child process (so that a test can SIGKILL it and
 * start it again on the same SQLite file) with the built workbench as its static root and the
 * scripted release assistant. Resolves once it prints `listening on http://HOST:PORT`.
 */
export async function startServer(options: ServerOptions = {}): Promise<RunningServer> {
  let tempDir: string | undefined
  const dbPath = options.dbPath ?? join((tempDir = mkdtempSync(join(tmpdir(), 'interlude-e2e-'))), 'interlude.db')
  const args = [
    SERVER_BIN,
    '--host',
    '127.0.0.1',
    '--port',
    String(options.port ?? 0),
    '--db',
    dbPath,
    ...(options.agentModule === undefined ? ['--model', 'scripted'] : ['--agent', options.agentModule]),
    '--static',
    WORKBENCH_DIST,
    '--pacing-ms',
    String(options.pacingMs ?? 0),
    ...(options.interruptTtl === undefined ? [] : ['--interrupt-ttl', String(options.interruptTtl)]),
    ...(options.extraArgs ?? []),
  ]
  const env: NodeJS.ProcessEnv = { ...process.env, NODE_ENV: 'test' }
  delete env.OPENAI_API_KEY // always the scripted model
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))

  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`interlude-server did not start within 30 s:\n${output}`))
    }, 30_000)
    const onData = (chunk: Buffer) => {
      output += chunk.toString()
      const match = READY.exec(output)
      if (match?.[1]) {
        clearTimeout(timer)
        resolve(match[1].replace(/\/+$/, ''))
      }
    }
    child.stdout?.on('data', onData)
    child.stderr?.on('data', onData)
    child.once('exit', (code, signal) => {
      clearTimeout(timer)
      reject(new Error(`interlude-server exited (${code ?? signal}) before listening:\n${output}`))
    })
  })

  const port = Number(new URL(url).port)
  const terminate = async (signal: NodeJS.Signals) => {
    if (child.exitCode !== null || child.signalCode !== null) return
    child.kill(signal)
    const force = signal === 'SIGKILL' ? undefined : setTimeout(() => child.kill('SIGKILL'), 5_000)
    await exited
    if (force) clearTimeout(force)
  }
  return {
    url,
    port,
    dbPath,
    output: () => output,
    stop: async () => {
      await terminate('SIGTERM')
      if (tempDir) rmSync(tempDir, { recursive: true, force: true })
    },
    kill: () => terminate('SIGKILL'),
  }
}

export type { ChildProcess }
