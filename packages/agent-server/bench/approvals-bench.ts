/**
 * Approvals-from-anywhere benchmarks (not tests; docs/approvals.md). Run from packages/agent-server:
 *   node --import tsx bench/approvals-bench.ts        (or `BENCH=approvals pnpm bench` at the root)
 *
 * 1. Admission side by side on one SQLite server (the CLI in a child process, 100 concurrent threads): a resume
 *    through `POST /runs` by the owner, and a decision through `POST /threads/:id/decisions` by an approver. Server
 *    time from `Server-Timing: admission;dur=` where the route sends it, and the client's time to the answer.
 * 2. 1,000 followers (`GET …/events?follow=1`) of one thread on one server process: latency from the commit of
 *    each new event to its receipt by every follower, next to a bare Hono `streamSSE` broadcast of the same frames.
 *    Both servers are fixtures in a child process (`fixtures/`); the followers are this process.
 * 3. The expiry sweeper settling 10,000 due batches on SQLite (`sweepOnce`): alone (claims and decision records),
 *    and in the whole server with every continuation run to its end.
 * 4. Webhook delivery latency: `webhook-bench.ts`, run as it is.
 *
 * Env: BENCH_PARTS (1,2,3,4), BENCH_THREADS (100), BENCH_ADMISSION_ROUNDS (5), BENCH_FOLLOWERS (1000),
 * BENCH_FOLLOW_ROUNDS (20), BENCH_FOLLOW_DECODE (0), BENCH_PROFILE_DIR, BENCH_DUE (10000); part 4 reads
 * webhook-bench.ts's own variables.
 */
import { spawnSync } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { admissionRound, admissionTiming, fmt, pauseThreads, percentile, turnTiming } from './bench-utils.ts'
import type { ServerProcess } from './cli-process.ts'
import { cliHasFlag, spawnCli } from './cli-process.ts'
import { bearerTokens } from '../src/auth/authenticate.ts'
import { releaseAssistant } from '../src/demo/release-assistant.ts'
import { ExpirySweeper } from '../src/core/expiry/expiry-sweeper.ts'
import { createAgentServer } from '../src/http/app.ts'
import { NO_PRINCIPAL_QUOTAS } from '../src/config/limits.ts'
import { ValidatorCache } from '../src/schema/validator-cache.ts'
import { createSqliteStore } from '../src/store/sqlite/sqlite-store.ts'
import { ROOT, ENG, MGR, tmp, sleep, ms, stats, poster } from './approvals/setup.ts'
import { FOLLOWERS, FOLLOW_ROUNDS, DECODE, followers } from './approvals/followers.ts'

const PARTS = new Set((process.env.BENCH_PARTS ?? '1,2,3,4').split(',').map((p) => p.trim()))
const THREADS = Number(process.env.BENCH_THREADS ?? 100)
const ADMISSION_ROUNDS = Number(process.env.BENCH_ADMISSION_ROUNDS ?? 5)
const DUE = Number(process.env.BENCH_DUE ?? 10_000)

// ---- 1. admission: resume run vs decisions API ---------------------------------------------------

interface Samples {
  readonly server: number[]
  readonly client: number[]
  /** The wait for an admission turn before the server's time (`Server-Timing: turn;dur=`). */
  readonly turn: number[]
}

/** The CLI with an engineer who owns the threads and a manager allowed to decide every batch. */
async function approvalsServer(db: string): Promise<{ server: ServerProcess; decider: Record<string, string> }> {
  const tokens = ['--db', db, '--token', 'eng=eng-secret', '--token', 'mgr=mgr-secret']
  if (cliHasFlag('--approver')) return { server: await spawnCli([...tokens, '--approver', 'mgr']), decider: MGR }
  // A CLI without --approver: the owner decides through the decisions API instead (the same admission).
  console.log('   (the CLI has no --approver: the owner decides through the decisions API)')
  return { server: await spawnCli(tokens), decider: ENG }
}

/** Polls a run until it is no longer running (the continuation a decision started in the background). */
async function untilSettled(baseUrl: string, auth: Record<string, string>, threadId: string, runId: string) {
  for (;;) {
    // eng owns the threads; the decider names the owner (thread ids are per owner, docs/protocol.md#thread-ids).
    const response = await fetch(`${baseUrl}/threads/${threadId}/runs/${runId}?owner=eng`, { headers: auth })
    const view = (await response.json()) as { status?: string }
    if (response.status !== 200) throw new Error(`run view ${response.status}: ${JSON.stringify(view)}`)
    if (view.status !== 'running') return
    await sleep(20)
  }
}

async function decisionRound(baseUrl: string, decider: Record<string, string>, samples: Samples, keep: boolean) {
  const paused = await pauseThreads(poster(baseUrl, ENG), THREADS)
  const decided = await Promise.all(
    paused.map(async ({ threadId, interrupts }) => {
      const runId = `run_${randomUUID()}`
      const resume = interrupts.map((i) => ({ interruptId: i.id, status: 'resolved', payload: { approved: true } }))
      const started = performance.now()
      const response = await fetch(`${baseUrl}/threads/${threadId}/decisions?owner=eng`, {
        method: 'POST',
        headers: { ...decider, 'Content-Type': 'application/json' },
        body: JSON.stringify({ runId, resume }),
      })
      const elapsed = performance.now() - started
      if (response.status !== 202) throw new Error(`decision refused: ${response.status} ${await response.text()}`)
      const server = admissionTiming(response)
      const turn = turnTiming(response)
      await response.arrayBuffer()
      if (keep) {
        samples.client.push(elapsed)
        samples.turn.push(turn)
        if (server !== undefined) samples.server.push(server)
      }
      return { threadId, runId }
    }),
  )
  // The continuations run after the 202: let them finish so they do not weigh on the next round.
  for (const { threadId, runId } of decided) await untilSettled(baseUrl, decider, threadId, runId)
}

async function admission() {
  const { server, decider } = await approvalsServer(path.join(tmp, 'admission.db'))
  const resume: Samples = { server: [], client: [], turn: [] }
  const decisions: Samples = { server: [], client: [], turn: [] }
  try {
    for (let round = 0; round < ADMISSION_ROUNDS + 1; round++) {
      const keep = round > 0 // round 0 warms up
      // Alternate the order so neither route always runs on a warmer process.
      for (const which of round % 2 === 0 ? ['resume', 'decide'] : ['decide', 'resume']) {
        if (which === 'decide') await decisionRound(server.baseUrl, decider, decisions, keep)
        else
          for (const s of await admissionRound(poster(server.baseUrl, ENG), THREADS)) {
            if (!keep) continue
            resume.client.push(s.elapsed)
            resume.server.push(s.server)
            resume.turn.push(s.turn)
          }
      }
    }
  } finally {
    await server.stop()
  }
  return { resume, decisions }
}

// ---- 3. the expiry sweeper ------------------------------------------------------------------------

const TTL_SECONDS = 3600
/** The server clock of the sweeps: past every deadline of the batches paused before. */
const afterDeadlines = () => Date.now() + (TTL_SECONDS + 1) * 1000
const logError = (message: string, error: unknown) => console.error(message, error)

/** `DUE` real pauses (the release assistant's batch of two approvals, policy deny) in a SQLite file, then closed. */
async function pausedDatabase(file: string): Promise<number> {
  const app = createAgentServer({
    agent: releaseAssistant(),
    store: createSqliteStore(file),
    authenticate: bearerTokens({ eng: 'eng-secret' }),
    interruptTtlSeconds: TTL_SECONDS,
    expirySweepMs: 0,
    // One principal opens DUE threads in seconds: the per-principal quotas (60 new threads a minute) would refuse it.
    limits: { ...NO_PRINCIPAL_QUOTAS },
  })
  await app.ready()
  const started = performance.now()
  let created = 0
  const pause = async () => {
    while (created < DUE) {
      created += 1
      const response = await app.request(`${app.basePath}/runs`, {
        method: 'POST',
        headers: { ...ENG, 'Content-Type': 'application/json' },
        body: JSON.stringify({
          threadId: `due-${randomUUID()}`,
          runId: randomUUID(),
          messages: [{ id: randomUUID(), role: 'user', content: 'deploy v2.1 to production' }],
        }),
      })
      const text = await response.text()
      if (!text.includes('"type":"interrupt"')) throw new Error(`not paused: ${text.slice(-300)}`)
    }
  }
  await Promise.all(Array.from({ length: 8 }, pause))
  await app.close() // closes the store: the WAL is checkpointed into the file, which can be copied
  return performance.now() - started
}

/**
 * The sweeper alone: one `sweepOnce()` over a copy of the paused database with a run manager that starts nothing,
 * so the figure is the sweep's own work — the deadline index, the policy, the claim with the decision record.
 */
async function sweepAlone(file: string) {
  const store = createSqliteStore(file)
  const sweeper = new ExpirySweeper({
    store,
    runs: {
      start: () => undefined,
      whenDone: () => Promise.resolve(),
      hold: () => undefined,
      lease: () => ({ executorId: 'bench-sweeper', leaseUntil: Date.now() + 60_000 }),
    },
    validators: new ValidatorCache(),
    now: afterDeadlines,
    logError,
    sweepMs: 0,
  })
  const started = performance.now()
  const decided = await sweeper.sweepOnce()
  const swept = performance.now() - started
  const left = (await store.listDueBatches({ now: afterDeadlines(), limit: 10 })).length
  await store.close()
  return { decided, swept, left }
}

/**
 * The whole server: one `sweepOnce()` (it decides every batch and queues the continuations), then every continuation
 * (the model is told, the turn ends) to its end.
 */
async function sweepWithContinuations(file: string) {
  const store = createSqliteStore(file)
  const app = createAgentServer({
    agent: releaseAssistant(),
    store,
    authenticate: bearerTokens({ eng: 'eng-secret' }),
    now: afterDeadlines,
    interruptTtlSeconds: TTL_SECONDS,
    expirySweepMs: 0,
  })
  await app.ready()
  try {
    const started = performance.now()
    const decided = await app.expirySweeper.sweepOnce()
    const swept = performance.now() - started
    // The sweep queues continuations and starts a few at a time: wait for the queue and the runs to drain.
    while (app.expirySweeper.waitingContinuations > 0 || app.runs.activeCount > 0) {
      await app.runs.idle()
      await sleep(5)
    }
    const settled = performance.now() - started
    const left = (await store.listDueBatches({ now: afterDeadlines(), limit: 10 })).length
    return { decided, swept, settled, left }
  } finally {
    await app.close()
  }
}

// ---- main --------------------------------------------------------------------------------------------

console.log(`machine: ${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'unknown'}), node ${process.version}`)
try {
  if (PARTS.has('1')) {
    console.log(
      `\n1) admission, ${THREADS} concurrent threads on SQLite (the CLI in a child process), ${ADMISSION_ROUNDS} rounds of each after a warm-up`,
    )
    const { resume, decisions } = await admission()
    console.log(`   resume run  POST /runs                  server (Server-Timing): ${stats(resume.server)}`)
    console.log(`                                           wait for a turn       : ${stats(resume.turn)}`)
    console.log(`                                           client, to headers    : ${stats(resume.client)}`)
    if (decisions.server.length > 0)
      console.log(`   decision    POST /threads/:id/decisions server (Server-Timing): ${stats(decisions.server)}`)
    else console.log(`   decision    POST /threads/:id/decisions server (Server-Timing): (not sent by the route)`)
    console.log(`                                           wait for a turn       : ${stats(decisions.turn)}`)
    console.log(`                                           client, to the 202    : ${stats(decisions.client)}`)
    console.log(`   (${resume.client.length} + ${decisions.client.length} samples; target p99 ≤ 10 ms)`)
  }
  if (PARTS.has('2')) {
    console.log(
      `\n2) ${fmt(FOLLOWERS)} followers of one thread on one server process (followers in this process, ${DECODE ? 'decoding every event' : 'splitting frames'}), ${FOLLOW_ROUNDS} runs after a warm-up`,
    )
    for (const [name, file] of [
      ['Interlude, GET …/events?follow=1', 'follow-server.ts'],
      ['bare Hono streamSSE broadcast', 'broadcast-server.ts'],
    ] as const) {
      const { all, first, earliest, latest, events } = await followers(path.join(ROOT, 'bench/fixtures', file))
      console.log(`   ${name}: commit → receipt (${fmt(all.length)} samples, ${events} events per follower)`)
      console.log(`     every event                    : ${stats(all)}`)
      console.log(`     the first event of each run    : ${stats(first)}`)
      console.log(
        `     per event, the first follower  : p50 ${ms(percentile(earliest, 50))}; the last: p50 ${ms(percentile(latest, 50))}, p99 ${ms(percentile(latest, 99))}`,
      )
    }
    console.log('   (target p99 ≤ 100 ms)')
  }
  if (PARTS.has('3')) {
    console.log(
      `\n3) expiry sweep of ${fmt(DUE)} due batches (2 approvals each, policy deny) on SQLite, one sweepOnce()`,
    )
    const base = path.join(tmp, 'due.db')
    const setup = await pausedDatabase(base)
    console.log(`   ${fmt(DUE)} real pauses created in ${(setup / 1000).toFixed(1)} s (not measured)`)
    fs.copyFileSync(base, path.join(tmp, 'due-alone.db'))
    fs.copyFileSync(base, path.join(tmp, 'due-full.db'))
    const alone = await sweepAlone(path.join(tmp, 'due-alone.db'))
    console.log(
      `   sweeper alone (claims + decision records, no continuation): ${fmt(alone.decided)} decided in ${(alone.swept / 1000).toFixed(2)} s, ${fmt(alone.decided / (alone.swept / 1000))}/s; due left: ${alone.left} (target ≤ 10 s)`,
    )
    const full = await sweepWithContinuations(path.join(tmp, 'due-full.db'))
    console.log(
      `   whole server: sweepOnce returned after ${(full.swept / 1000).toFixed(2)} s (${fmt(full.decided)} decided), every continuation finished after ${(full.settled / 1000).toFixed(2)} s; due left: ${full.left}`,
    )
  }
  if (PARTS.has('4')) {
    console.log('\n4) webhook delivery (webhook-bench.ts)')
    const result = spawnSync(process.execPath, ['--import', 'tsx', 'bench/webhook-bench.ts'], {
      cwd: ROOT,
      stdio: 'inherit',
    })
    if (result.status !== 0) process.exitCode = 1
  }
} finally {
  fs.rmSync(tmp, { recursive: true, force: true })
}
