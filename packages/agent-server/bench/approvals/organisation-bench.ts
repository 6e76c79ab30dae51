/**
 * Organisation approvals in one run (docs/approvals.md#organisation-policies, #bounded-grants). Not a test. Run from
 * packages/agent-server:  node --import tsx bench/approvals/organisation-bench.ts
 *
 * Runs, one after the other in this command, the two figures the organisation approvals are held to:
 *   1. votes-bench.ts — a vote's admission under a quorum, 100 concurrent votes across 50 interrupts (SQLite),
 *   2. grant-take.ts — a bounded grant's atomic take under 30 concurrent takes (PostgreSQL, two stores on one schema).
 * Each part reads its own environment variables (see its header).
 */
import { spawnSync } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const here = path.dirname(fileURLToPath(import.meta.url))
let failed = false
for (const part of ['votes-bench.ts', 'grant-take.ts']) {
  console.log(`\n› ${part}`)
  const run = spawnSync(process.execPath, ['--import', 'tsx', path.join(here, part)], { stdio: 'inherit' })
  if (run.status !== 0) failed = true
}
process.exitCode = failed ? 1 : 0
