/**
 * `pnpm bench`: every Interlude benchmark, one after the other, each printing its side-by-side
 * table (docs/quality.md). Benchmarks are never part of the test gate.
 *   BENCH=client,server pnpm bench   — run a subset (sse, client, bundle, browser, server, durability, approvals)
 */
import { spawnSync } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))
const root = join(here, '..')
const tsNode = ['--conditions=@interlude/source', '--import', 'tsx']

const all: { name: string; title: string; cwd: string; args: string[] }[] = [
  { name: 'sse', title: 'SSE decoder (protocol)', cwd: here, args: [...tsNode, 'sse-decoder.ts'] },
  {
    name: 'client',
    title: 'Client ingest: ChatRuntime vs HttpAgent vs bare loop (react)',
    cwd: here,
    args: [...tsNode, 'client-ingest.ts'],
  },
  {
    name: 'bundle',
    title: 'Bundle size: useChat + runtime vs HttpAgent (react)',
    cwd: here,
    args: [...tsNode, 'bundle-size.ts'],
  },
  {
    name: 'browser',
    title:
      'In the browser: a 2,000-message thread streaming at ~100 deltas/s, useChat vs a bare React component (react)',
    cwd: here,
    args: [...tsNode, 'browser-stream.ts'],
  },
  {
    name: 'server',
    title: 'Server events/s vs bare Hono loop, admission latency on SQLite (agent-server)',
    cwd: join(root, 'packages/agent-server'),
    args: ['--import', 'tsx', 'bench/server-bench.ts'],
  },
  {
    name: 'durability',
    title: 'Event log, claims on SQLite vs PostgreSQL, idle SSE connections (agent-server)',
    cwd: join(root, 'packages/agent-server'),
    args: ['--import', 'tsx', 'bench/durability-bench.ts'],
  },
  {
    name: 'approvals',
    title: 'Approvals: decisions vs resume admission, 1,000 followers, expiry sweep, webhooks (agent-server)',
    cwd: join(root, 'packages/agent-server'),
    args: ['--import', 'tsx', 'bench/approvals-bench.ts'],
  },
]

const wanted = process.env.BENCH?.split(',').map((s) => s.trim())
let failed = 0
console.log(`Interlude benchmarks — node ${process.version}, ${(await import('node:os')).cpus().length} cores`)
for (const bench of all) {
  if (wanted && !wanted.includes(bench.name)) continue
  console.log(`\n=== ${bench.title} ===`)
  const result = spawnSync(process.execPath, bench.args, { cwd: bench.cwd, stdio: 'inherit' })
  if (result.status !== 0) {
    failed++
    console.error(`(${bench.name} exited with ${result.status ?? result.signal})`)
  }
}
process.exit(failed === 0 ? 0 : 1)
