import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { READY } from './ready.ts'

/**
 * Starts a server entry of this package (a path relative to the package) as a child (`node --import tsx <entry>`) and resolves with the URLs it prints
 * on its `READY` line. The child's output is kept for the error if it exits or does not get ready.
 */
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..')

export interface ChildServer<TUrls> {
  readonly urls: TUrls
  stop(): Promise<void>
}

/** A Node for `@mastra/core` (≥ 22.13): this one if it is new enough, else the repository's Node 24. */
export function nodeForMastra(): string {
  const [major = 0, minor = 0] = process.versions.node.split('.').map(Number)
  if (major > 22 || (major === 22 && minor >= 13)) return process.execPath
  const dir = execFileSync('bash', [join(root, '..', 'scripts', 'node24.sh')], { encoding: 'utf8' }).trim()
  return join(dir, 'bin', 'node')
}

export interface ChildOptions {
  /** The Node to run it on. @default this one */
  readonly node?: string
  /** Added to the environment. */
  readonly env?: Readonly<Record<string, string>>
}

export async function startChild<TUrls>(entry: string, options: ChildOptions = {}): Promise<ChildServer<TUrls>> {
  const child: ChildProcess = spawn(options.node ?? process.execPath, ['--import', 'tsx', join(root, entry)], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
    // No telemetry and no tracing from the libraries: the suite runs offline.
    env: {
      ...process.env,
      COPILOTKIT_TELEMETRY_DISABLED: 'true',
      DO_NOT_TRACK: '1',
      LANGSMITH_TRACING: 'false',
      LANGCHAIN_TRACING_V2: 'false',
      MASTRA_TELEMETRY_DISABLED: 'true',
      ...options.env,
    },
  })
  let output = ''
  const urls = await new Promise<TUrls>((resolve, reject) => {
    let line = ''
    child.stdout?.on('data', (chunk: Buffer) => {
      output += String(chunk)
      line += String(chunk)
      const ready = line.split('\n').find((l) => l.startsWith(`${READY} `))
      if (ready) resolve(JSON.parse(ready.slice(READY.length + 1)) as TUrls)
    })
    child.stderr?.on('data', (chunk: Buffer) => (output += String(chunk)))
    child.once('exit', (code) => reject(new Error(`${entry} exited (${code}) before it listened:\n${output}`)))
  })
  return {
    urls,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve()
        child.once('exit', () => resolve())
        child.kill('SIGTERM')
      }),
  }
}
