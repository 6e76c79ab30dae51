/**
 * Bounded grants (docs/approvals.md#bounded-grants): the latency of a grant's atomic take on PostgreSQL under 30
 * concurrent takes, as two replicas (two stores, each with its own pools) on one schema see it. Each round makes a
 * fresh grant by the claim of an approval (as admission does), then fires 30 takes of it at once, alternating stores.
 *
 *   A. a grant of 3: 3 takes win, 27 find nothing left (the shape of 30 matching calls racing for a small grant),
 *   B. a grant of 30: every take wins, each on its own slot of the one grant (before slots: all queued on its row),
 *   C. 30 grants of 1, one take of each at once (no row shared: what the machine gives 30 commits at once).
 *
 * Per take: wall time of `Store.grants.take` in this process (the one statement, its commit and the round trip).
 *
 *   node --import tsx bench/approvals/grant-take.ts
 *   # env: BENCH_ROUNDS (100), BENCH_CONCURRENCY (30), BENCH_PG_URL (INTERLUDE_TEST_PG_URL or postgres://127.0.0.1:5432/postgres)
 */
import { randomBytes } from 'node:crypto'
import type { Grant } from '@interlude/protocol'
import pg from 'pg'
import { withDefaultUser } from '../../src/store/postgres/connection.ts'
import { quoteIdent } from '../../src/store/postgres/migrations.ts'
import { createPostgresStore } from '../../src/store/postgres/postgres-store.ts'
import type { Store } from '../../src/store/store.ts'
import { median, percentile } from '../bench-utils.ts'

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 100)
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 30)
const PG_URL = process.env.BENCH_PG_URL ?? process.env.INTERLUDE_TEST_PG_URL ?? 'postgres://127.0.0.1:5432/postgres'
const OWNER = 'alice'
const lease = (now: number) => ({ executorId: 'bench', leaseUntil: now + 60_000 })

async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: withDefaultUser(PG_URL) })
  await client.connect()
  try {
    await client.query(sql)
  } finally {
    await client.end()
  }
}

/** A thread paused with one approval, decided by a claim that makes a grant of `calls` (one transaction). */
async function grantOf(store: Store, round: string, calls: number): Promise<{ threadId: string; grantId: string }> {
  const now = Date.now()
  const threadId = `t-${round}`
  const runId = `r-${round}`
  await store.startInputRun({
    threadId,
    ownerId: OWNER,
    runId,
    parentRunId: undefined,
    expectedRevision: null,
    initialState: {},
    messages: [{ id: `u-${round}`, role: 'user', content: 'deploy' }],
    toolResults: [],
    now,
    ...lease(now),
  })
  const interrupt = { id: `int_${round}`, reason: 'tool_call', toolCallId: 'c1' }
  const batchId = `b-${round}`
  const stored = { interrupt, kind: 'approval' as const, toolCallId: 'c1', toolName: 'deploy' }
  await store.createBatch({
    batchId,
    threadId,
    runId,
    interrupts: [stored],
    createdAt: now,
    expiresAt: now + 60_000,
    onExpiry: 'deny',
  })
  await store.finishRun({
    threadId,
    runId,
    status: 'interrupted',
    outcome: { type: 'interrupt', interrupts: [] },
    errorCode: undefined,
    events: [{ type: 'RUN_FINISHED', json: '{"type":"RUN_FINISHED"}' }],
    closeBatch: undefined,
    now,
  })
  const grant: Grant = {
    grantId: `grant_${round}`,
    owner: OWNER,
    scope: 'principal',
    toolName: 'deploy',
    calls,
    callsLeft: calls,
    createdBy: OWNER,
    createdAt: new Date(now).toISOString(),
    sourceInterruptId: interrupt.id,
  }
  const decision = { decisionHash: 'h', decision: [], decidedBy: OWNER, via: 'api' as const }
  const claim = { threadId, batchId, runId: `resume-${round}`, now, ...lease(now), ...decision, grants: [grant] }
  const claimed = await store.claimBatch(claim)
  if (!claimed.ok) throw new Error(`claim refused: ${claimed.reason}`)
  return { threadId, grantId: grant.grantId }
}

async function scenario(stores: readonly Store[], label: string, calls: number): Promise<void> {
  const times: number[] = []
  let won = 0
  for (let round = 0; round < ROUNDS; round++) {
    const id = `${label}-${round}-${randomBytes(3).toString('hex')}`
    const { threadId, grantId } = await grantOf(stores[0]!, id, calls)
    const takes = Array.from({ length: CONCURRENCY }, async (_, i) => {
      const grants = stores[i % stores.length]!.grants!
      const started = performance.now()
      const taken = await grants.take({
        grantId,
        owner: OWNER,
        threadId,
        toolCallId: `call-${i}`,
        runId: 'r',
        now: Date.now(),
      })
      times.push(performance.now() - started)
      return taken
    })
    won += (await Promise.all(takes)).filter((t) => t !== undefined).length
  }
  const expected = Math.min(calls, CONCURRENCY) * ROUNDS
  console.log(
    `${label}: ${times.length} takes in ${ROUNDS} rounds of ${CONCURRENCY} at once, ${won} won (expected ${expected}) — ` +
      `median ${median(times).toFixed(2)} ms, p99 ${percentile(times, 99).toFixed(2)} ms, max ${Math.max(...times).toFixed(2)} ms`,
  )
  if (won !== expected) throw new Error(`${label}: ${won} takes won, expected ${expected}`)
}

/** C: each of the 30 takes at once has its own grant, so none waits for another's row lock. */
async function separate(stores: readonly Store[]): Promise<void> {
  const times: number[] = []
  const rounds = Math.max(1, Math.round(ROUNDS / 5))
  for (let round = 0; round < rounds; round++) {
    const made = []
    for (let i = 0; i < CONCURRENCY; i++)
      made.push(await grantOf(stores[0]!, `C-${round}-${i}-${randomBytes(3).toString('hex')}`, 1))
    await Promise.all(
      made.map(async ({ threadId, grantId }, i) => {
        const started = performance.now()
        const taken = await stores[i % stores.length]!.grants!.take({
          grantId,
          owner: OWNER,
          threadId,
          toolCallId: 'c',
          runId: 'r',
          now: Date.now(),
        })
        times.push(performance.now() - started)
        if (taken === undefined) throw new Error('C: a take of a fresh grant found nothing')
      }),
    )
  }
  console.log(
    `C. ${CONCURRENCY} grants of 1, taken at once: ${times.length} takes in ${rounds} rounds — ` +
      `median ${median(times).toFixed(2)} ms, p99 ${percentile(times, 99).toFixed(2)} ms, max ${Math.max(...times).toFixed(2)} ms`,
  )
}

const schema = `interlude_bench_${randomBytes(6).toString('hex')}`
await admin(`CREATE SCHEMA ${quoteIdent(schema)}`)
const stores: Store[] = []
try {
  stores.push(await createPostgresStore({ connectionString: PG_URL, schema }))
  stores.push(await createPostgresStore({ connectionString: PG_URL, schema }))
  // Warm-up: connections opened and statements prepared before anything is measured.
  for (let i = 0; i < 3; i++) {
    const { threadId, grantId } = await grantOf(stores[0]!, `warm-${i}`, CONCURRENCY)
    await Promise.all(
      Array.from({ length: CONCURRENCY }, (_, j) =>
        stores[j % 2]!.grants!.take({
          grantId,
          owner: OWNER,
          threadId,
          toolCallId: `w-${j}`,
          runId: 'r',
          now: Date.now(),
        }),
      ),
    )
  }
  console.log(`grant take on PostgreSQL, two stores on one schema (${PG_URL.replace(/\/\/[^@]*@/, '//')})`)
  await scenario(stores, 'A. grant of 3', 3)
  await scenario(stores, `B. grant of ${CONCURRENCY}`, CONCURRENCY)
  await separate(stores)
} finally {
  for (const store of stores) await store.close()
  await admin(`DROP SCHEMA IF EXISTS ${quoteIdent(schema)} CASCADE`)
}
