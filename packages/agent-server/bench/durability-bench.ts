/**
 * Durability benchmarks (not tests). Run: pnpm --filter @interlude/agent-server bench:durability
 * (builds are needed for part 5: pnpm -r --filter "./packages/**" run build).
 *
 * Side by side in one run, SQLite and PostgreSQL:
 * 1. Event-log append throughput (events/s): batches of 256 (what a run writes) and single-event commits.
 * 2. Claim latency (store.claimBatch) p50/p99, 100 concurrent claims on 100 paused threads.
 * 3. Events/s of one scripted run through POST /runs with the durable log vs a bare Hono streamSSE loop.
 * 3b. The same run on PostgreSQL through the CLI in child processes, BENCH_RUN_STREAMS (2) at once: one process and
 *    `--workers 2` against bare Hono loops in one and two processes, in turns (and BENCH_BASELINE_CLI beside them).
 * 4. Resume admission p50/p99 (Server-Timing) at 100 concurrent threads, the CLI in a child process; PostgreSQL with
 *    one process and with `--workers 2` measured in turns (and BENCH_BASELINE_CLI, another checkout's CLI, beside them).
 * 5. RSS of one server process holding 1,000 idle SSE connections (tails of silent runs).
 * 6. PostgreSQL statements (round trips) per resume admission, per new-input admission and per durable run: counted,
 *    so deterministic (the before/after figure of a change that timings on a busy machine cannot give).
 *
 * Env: BENCH_PG_SETUPS (part 4, default "1 process=;--workers 2=--workers 2"), BENCH_BASELINE_CLI (part 4: another
 * checkout's src/cli.ts measured beside them), BENCH_PARTS (e.g. "1,4"; default all), BENCH_PG_URL (default INTERLUDE_TEST_PG_URL or postgres://127.0.0.1:5432/postgres), BENCH_APPEND (50000),
 * BENCH_TOKENS (50000), BENCH_ROUNDS (3), BENCH_THREADS (100), BENCH_ADMISSION_ROUNDS (3), BENCH_IDLE (1000).
 * Every PostgreSQL part uses its own schema (interlude_bench_<random>), dropped at the end.
 */
import fs from 'node:fs'
import os from 'node:os'
import { fmt, median, percentile } from './bench-utils.ts'
import { BASELINE_CLI } from './cli-process.ts'
import {
  PG_URL,
  APPEND,
  TOKENS,
  ROUNDS,
  THREADS,
  ADMISSION_ROUNDS,
  PARTS,
  BACKENDS,
  PG_SETUPS,
  ms,
  tmp,
  schemas,
  adminQuery,
  backends,
} from './durability/setup.ts'
import { appendThroughput, claimLatency } from './durability/store-parts.ts'
import { runThroughput, RUN_STREAMS, runThroughputProcesses } from './durability/run-throughput.ts'
import { admissionLine, admissionSideBySide, idleConnections } from './durability/admission-parts.ts'
import { roundTrips } from './durability/round-trips.ts'
import type { RoundTrips } from './durability/round-trips.ts'
import type { AdmissionSetup } from './durability/admission-parts.ts'

// ---- main ----------------------------------------------------------------------------------------

console.log(
  `machine: ${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'unknown'}), node ${process.version}, PostgreSQL at ${PG_URL}`,
)
try {
  if (PARTS.has('1')) {
    console.log(`\n1) event-log append throughput, ${fmt(APPEND)} events per measurement (median of ${ROUNDS})`)
    console.log(`   ${'backend'.padEnd(12)} ${'batches of 256'.padStart(18)} ${'1 event per commit'.padStart(20)}`)
    for (const backend of backends) {
      const { store } = await backend.open()
      const batched: number[] = []
      const single: number[] = []
      for (let r = 0; r < ROUNDS; r++) {
        batched.push(await appendThroughput(store, 256, APPEND))
        single.push(await appendThroughput(store, 1, Math.min(APPEND, 2000)))
      }
      await store.close()
      console.log(
        `   ${backend.name.padEnd(12)} ${`${fmt(median(batched))} ev/s`.padStart(18)} ${`${fmt(median(single))} ev/s`.padStart(20)}`,
      )
    }
  }

  if (PARTS.has('2')) {
    console.log(
      `\n2) claim latency (store.claimBatch), ${THREADS} concurrent claims, ${ADMISSION_ROUNDS} rounds after a warm-up`,
    )
    for (const backend of backends) {
      const { store } = await backend.open()
      const samples = await claimLatency(store)
      await store.close()
      console.log(
        `   ${backend.name.padEnd(12)} p50 ${ms(percentile(samples, 50))}, p99 ${ms(percentile(samples, 99))}, max ${ms(Math.max(...samples))} (${samples.length} samples)`,
      )
    }
  }

  if (PARTS.has('3')) {
    const run = await runThroughput()
    console.log(
      `\n3) one scripted run, ${fmt(TOKENS + 4)} events, 0 ms pacing, POST /runs vs bare Hono streamSSE (median of ${ROUNDS})`,
    )
    console.log(`   bare Hono streamSSE loop      : ${fmt(run.bare)} events/s`)
    for (const [name, eps] of Object.entries(run.durable)) {
      console.log(
        `   durable log on ${name.padEnd(14)}: ${fmt(eps)} events/s = ${((eps / run.bare) * 100).toFixed(1)}% of bare (target ≥ 50%)`,
      )
    }
  }

  if (PARTS.has('3b') && BACKENDS.has('PostgreSQL')) {
    const eps = await runThroughputProcesses()
    console.log(
      `\n3b) ${RUN_STREAMS} concurrent scripted runs of ${fmt(TOKENS + 4)} events, servers in child processes (median of ${ROUNDS})`,
    )
    const floor = (name: string) =>
      eps.get(name.includes('--workers 2') ? 'bare Hono, 2 processes' : 'bare Hono, 1 process')!
    for (const [name, value] of eps) {
      const vs = name.startsWith('bare')
        ? ''
        : ` = ${((value / floor(name)) * 100).toFixed(1)}% of bare Hono with as many processes, ${((value / eps.get('bare Hono, 1 process')!) * 100).toFixed(1)}% of 1 bare process (target ≥ 50%)`
      console.log(`   ${name.padEnd(26)}: ${fmt(value)} events/s${vs}`)
    }
  }

  if (PARTS.has('4')) {
    console.log(
      `\n4) resume admission (Server-Timing), ${THREADS} concurrent threads, CLI in a child process, ${ADMISSION_ROUNDS} rounds after a warm-up`,
    )
    if (BACKENDS.has('SQLite')) {
      // With and without admission turns, in turns (a fresh file and process per turn).
      const results = await admissionSideBySide(
        [
          { name: 'SQLite', args: [] },
          { name: 'SQLite, without turns', args: ['--no-admission-turns'] },
        ],
        'SQLite',
      )
      for (const [name, samples] of results) console.log(admissionLine(name, samples, '10 ms'))
    }
    if (BACKENDS.has('PostgreSQL')) {
      const setups: AdmissionSetup[] = [
        ...PG_SETUPS.map(([name, args]) => ({ name: `PostgreSQL, ${name}`, args })),
        ...(BASELINE_CLI !== undefined
          ? [{ name: 'PostgreSQL, baseline CLI', args: [], script: BASELINE_CLI } satisfies AdmissionSetup]
          : []),
      ]
      const results = await admissionSideBySide(setups)
      const one = results.get(setups[0]!.name)!.map((s) => s.server)
      for (const [name, samples] of results) {
        const server = samples.map((s) => s.server)
        const vs =
          name === setups[0]!.name
            ? ''
            : `; ×${(percentile(server, 50) / percentile(one, 50)).toFixed(2)} p50, ×${(percentile(server, 99) / percentile(one, 99)).toFixed(2)} p99 of ${setups[0]!.name}`
        console.log(admissionLine(name, samples, '25 ms', vs))
      }
    }
  }

  if (PARTS.has('6') && BACKENDS.has('PostgreSQL')) {
    const trips = await roundTrips()
    console.log(`\n6) PostgreSQL statements (one round trip each) per request, one request at a time (median of 5)`)
    const line = (name: string, t: RoundTrips) =>
      console.log(
        `   ${name.padEnd(34)} admission ${String(t.admission).padStart(3)}, whole request ${String(t.total).padStart(4)} (${t.transactions} transactions)`,
      )
    line('resume (2 approvals, release demo)', trips.resume)
    line('new input (pauses at 2 approvals)', trips.input)
    line(`one run of ${fmt(trips.run.events)} events`, trips.run)
    console.log(`   = ${((trips.run.total / trips.run.events) * 1000).toFixed(1)} statements per 1,000 streamed events`)
  }

  if (PARTS.has('5')) {
    const idle = await idleConnections()
    console.log(
      `\n5) ${fmt(idle.connections)} idle SSE connections (tails of ${idle.threads} silent runs) held by one server process (SQLite)`,
    )
    console.log(
      `   RSS ${(idle.before / 2 ** 20).toFixed(1)} MiB before → ${(idle.after / 2 ** 20).toFixed(1)} MiB with the connections ` +
        `(+${((idle.after - idle.before) / 2 ** 10 / idle.connections).toFixed(1)} KiB each) (target ≤ 150 MB)`,
    )
  }
} finally {
  for (const schema of schemas) await adminQuery(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined)
  fs.rmSync(tmp, { recursive: true, force: true })
}
