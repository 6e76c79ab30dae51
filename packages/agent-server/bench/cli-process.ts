/** Server processes for the benchmarks: the real CLI (or a fixture) in a child, so the server has its own core. */
import type { ChildProcess } from 'node:child_process'
import { spawn, spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'

export interface ServerProcess {
  /** `http://HOST:PORT/api/agent` */
  readonly baseUrl: string
  readonly child: ChildProcess
  stop(): Promise<void>
}

/** Resolves once the child prints `listening on <url>` (what the CLI and the fixtures print). */
export function launched(child: ChildProcess, kill: () => void, basePath = '/api/agent'): Promise<ServerProcess> {
  return new Promise((resolve, reject) => {
    let out = ''
    const onData = (chunk: Buffer) => {
      out += chunk.toString('utf8')
      const match = /listening on (\S+)\n/.exec(out)
      if (!match) return
      child.stdout!.off('data', onData)
      resolve({
        baseUrl: `${match[1]!}${basePath}`,
        child,
        stop: () =>
          new Promise<void>((done) => {
            if (child.exitCode !== null) return done()
            child.once('exit', () => done())
            kill()
          }),
      })
    }
    child.stdout!.on('data', onData)
    child.once('exit', (code) => reject(new Error(`server exited with ${code}`)))
  })
}

const cli = fileURLToPath(new URL('../src/cli.ts', import.meta.url))
const tsx = ['--import', 'tsx', '--conditions', '@interlude/source']

/**
 * Another checkout's `src/cli.ts` (its dependencies installed) to measure beside this one in the same run:
 * `BENCH_BASELINE_CLI=/path/to/checkout/packages/agent-server/src/cli.ts` (before/after comparisons on a noisy machine).
 */
export const BASELINE_CLI = process.env.BENCH_BASELINE_CLI

/** Whether the CLI's `--help` lists `flag` (benchmarks that use a newer flag fall back without it). */
export function cliHasFlag(flag: string, script = cli): boolean {
  const help = spawnSync(process.execPath, [...tsx, script, '--help'], { encoding: 'utf8' })
  return help.stdout.includes(flag)
}

const noQuotas = new Map<string, string[]>()

/** `src/cli.ts` (or `script`) through tsx on a free port with 0 ms pacing, plus `args` (tokens, `--db`, …). */
export function spawnCli(args: readonly string[], script = cli): Promise<ServerProcess> {
  // The bench's one principal on one address carries every client's load: per-principal quotas and the per-address
  // connection cap off, room for the 1,000 idle streams (README "Quotas and limits"); logs at warn so request lines do
  // not cost the measured process (or flood the output).
  let extra = noQuotas.get(script)
  if (extra === undefined) {
    extra = cliHasFlag('--no-quotas', script)
      ? ['--no-quotas', '--max-connections-per-ip', '0', '--max-connections', '4096', '--log-level', 'warn']
      : []
    noQuotas.set(script, extra)
  }
  const prof = process.env.BENCH_CPU_PROF
    ? ['--cpu-prof', '--cpu-prof-interval', '50', '--cpu-prof-dir', process.env.BENCH_CPU_PROF]
    : []
  const child = spawn(
    process.execPath,
    [...prof, ...tsx, script, '--port', '0', '--pacing-ms', '0', ...extra, ...args],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  )
  return launched(child, () => child.kill('SIGTERM'))
}
