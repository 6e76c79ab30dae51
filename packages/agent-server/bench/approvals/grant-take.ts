/**
 * Bounded grants (docs/approvals.md#bounded-grants): the latency of a grant's atomic take on PostgreSQL under 30
 * concurrent takes, as two replicas (two stores, each with its own pools) on one schema see it. Each round makes a
 * fresh grant by the claim of an approval (as admission does), lets the set-up's trailing work finish, then fires 30
 * takes of it at once, alternating stores.
 *
 *   A. a grant of 3: 3 takes win, 27 find nothing left (the shape of 30 matching calls racing for a small grant),
 *   B. a grant of 30: every take wins, each on its own slot of the one grant,
 *   C. 30 grants of 1, one take of each at once (no row shared).
 *
 * Each scenario runs its variants side by side, taking turns round by round (so that they share the machine's moments
 * alike): "grouped" is the stores' own take (the takes one event loop turn releases go out as one statement per
 * store, `grant-takes.ts`); "alone" sends every take as its own statement, up to 30 in flight per store, on a pool
 * with the same settings (what the take was before grouping). A also runs grouped with the slots locked inside the
 * group statement, as before migration `0019-grant-slot-locks`, on pools like the store's. D is the floor: one
 * `SELECT 1` per store at once, timed the same way. Per take: wall time of the take in this process (statement,
 * commit, round trip, and the wait for a statement in flight).
 *
 *   node --import tsx bench/approvals/grant-take.ts
 *   # env: BENCH_ROUNDS (100), BENCH_CONCURRENCY (30), BENCH_PG_URL (INTERLUDE_TEST_PG_URL or postgres://127.0.0.1:5432/postgres),
 *   #      BENCH_VARIANTS (grouped,locked,alone: which variants take turns)
 */
import { randomBytes } from 'node:crypto'
import type { DecisionRecord, Grant } from '@interlude/protocol'
import pg from 'pg'
import type { GrantTake } from '../../src/store/grants.ts'
import { withDefaultUser } from '../../src/store/postgres/connection.ts'
import {
  DEFAULT_TAKE_CONCURRENCY,
  MAX_TAKE_GROUP,
  TAKE_GROUP,
  TakeGroups,
} from '../../src/store/postgres/grant-takes.ts'
import type { PgPools } from '../../src/store/postgres/pools.ts'
import { createPools } from '../../src/store/postgres/pools.ts'
import { quoteIdent } from '../../src/store/postgres/migrations.ts'
import { createPostgresStore } from '../../src/store/postgres/postgres-store.ts'
import type { Store } from '../../src/store/store.ts'
import { median, percentile } from '../bench-utils.ts'

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 100)
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 30)
const PG_URL = process.env.BENCH_PG_URL ?? process.env.INTERLUDE_TEST_PG_URL ?? 'postgres://127.0.0.1:5432/postgres'
const OWNER = 'alice'
const SEPARATE_ROUNDS = Math.max(1, Math.round(ROUNDS / 5))
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

/**
 * The group statement with its slots locked inside it (`FOR UPDATE SKIP LOCKED`), as before `0019-grant-slot-locks`:
 * a take that meets a slot another take committed meanwhile re-checks it with the whole statement set up again.
 */
const LOCKED_IN_STATEMENT = (() => {
  const free = /FROM \(SELECT array_agg[\s\S]*?grant_free_slots\(a\.ids, a\.ks\) f/
  if (!free.test(TAKE_GROUP)) throw new Error('The group statement no longer locks its slots by grant_free_slots.')
  return TAKE_GROUP.replace(
    free,
    `FROM (SELECT grant_id, count(*) AS k FROM wanted GROUP BY grant_id) c CROSS JOIN LATERAL (
      SELECT s.grant_id, s.slot FROM grant_slots s
      WHERE s.grant_id = c.grant_id AND s.used_by_call IS NULL
      ORDER BY s.slot LIMIT c.k FOR UPDATE SKIP LOCKED
    ) f`,
  )
})()

/** How one store takes: its own grouped take, or every take alone. */
type Take = (request: GrantTake) => Promise<DecisionRecord | undefined>

/**
 * After a round's set-up, before its takes: the set-up's own trailing work (its change notifications reaching both
 * stores' listeners) is let finish, so the figures are the takes' and not the set-up's.
 */
const settled = () => new Promise((resolve) => setTimeout(resolve, 20))

const summary = (times: readonly number[]) =>
  `median ${median([...times]).toFixed(2)} ms, p99 ${percentile([...times], 99).toFixed(2)} ms, max ${Math.max(...times).toFixed(2)} ms`

/** Times `takes` fired at once (one tick): each one's wall time, and their outcomes. */
async function atOnce(takes: readonly (() => Promise<DecisionRecord | undefined>)[], times: number[]) {
  return Promise.all(
    takes.map(async (take) => {
      const started = performance.now()
      const taken = await take()
      times.push(performance.now() - started)
      return taken
    }),
  )
}

/** One way of taking, on both stores: `takers[i % 2]` takes the i-th of the takes at once. */
interface Variant {
  /** Its name in `BENCH_VARIANTS`. */
  readonly key: string
  readonly name: string
  readonly takers: readonly Take[]
}

/**
 * `ROUNDS` rounds of `CONCURRENCY` takes at once of a fresh grant of `calls`, for each variant: every round runs each
 * variant once, the first of them rotating, so that the variants compared share the machine's moments alike.
 */
async function scenario(label: string, variants: readonly Variant[], calls: number): Promise<string[]> {
  const times = variants.map((): number[] => [])
  const won = variants.map(() => 0)
  for (let round = 0; round < ROUNDS; round++)
    for (let k = 0; k < variants.length; k++) {
      const v = (round + k) % variants.length
      const { takers } = variants[v]!
      const id = `${label}-${v}-${round}-${randomBytes(3).toString('hex')}`
      const { threadId, grantId } = await grantOf(stores[0]!, id, calls)
      await settled()
      const takes = Array.from(
        { length: CONCURRENCY },
        (_, i) => () =>
          takers[i % takers.length]!({
            grantId,
            owner: OWNER,
            threadId,
            toolCallId: `call-${i}`,
            runId: 'r',
            now: Date.now(),
          }),
      )
      won[v]! += (await atOnce(takes, times[v]!)).filter((t) => t !== undefined).length
    }
  const expected = Math.min(calls, CONCURRENCY) * ROUNDS
  return variants.map((variant, v) => {
    if (won[v] !== expected) throw new Error(`${label}, ${variant.name}: ${won[v]} takes won, expected ${expected}`)
    return `${label}, ${variant.name}: ${summary(times[v]!)}`
  })
}

/** C: each of the 30 takes at once has its own grant, so no row is shared; variants take turns as in `scenario`. */
async function separate(label: string, variants: readonly Variant[]): Promise<string[]> {
  const times = variants.map((): number[] => [])
  for (let round = 0; round < SEPARATE_ROUNDS; round++)
    for (let k = 0; k < variants.length; k++) {
      const v = (round + k) % variants.length
      const { takers } = variants[v]!
      const made = []
      for (let i = 0; i < CONCURRENCY; i++)
        made.push(await grantOf(stores[0]!, `C-${v}-${round}-${i}-${randomBytes(3).toString('hex')}`, 1))
      await settled()
      const takes = made.map(
        ({ threadId, grantId }, i) =>
          () =>
            takers[i % takers.length]!({
              grantId,
              owner: OWNER,
              threadId,
              toolCallId: 'c',
              runId: 'r',
              now: Date.now(),
            }),
      )
      const taken = await atOnce(takes, times[v]!)
      if (taken.some((t) => t === undefined)) throw new Error('C: a take of a fresh grant found nothing')
    }
  return variants.map((variant, v) => `${label}, ${variant.name}: ${summary(times[v]!)}`)
}

/** D: one `SELECT 1` per store at once on a warm connection, timed as the takes are (before the call). */
async function floor(): Promise<string> {
  const clients = await Promise.all(
    [0, 1].map(async () => {
      const client = new pg.Client({ connectionString: withDefaultUser(PG_URL) })
      await client.connect()
      await client.query({ name: 'floor', text: 'SELECT 1' })
      return client
    }),
  )
  const times: number[] = []
  try {
    for (let round = 0; round < ROUNDS; round++) {
      await settled()
      const answered = await Promise.all(
        clients.map(async (client) => {
          const started = performance.now()
          await client.query({ name: 'floor', text: 'SELECT 1' })
          return performance.now() - started
        }),
      )
      for (let i = 0; i < CONCURRENCY; i++) times.push(answered[i % 2]!)
    }
  } finally {
    for (const client of clients) await client.end()
  }
  return summary(times)
}

const schema = `interlude_bench_${randomBytes(6).toString('hex')}`
await admin(`CREATE SCHEMA ${quoteIdent(schema)}`)
const stores: Store[] = []
// "Alone": a pool per store with the take pool's settings, room for every take in flight, no take sharing a statement.
let alonePools: PgPools[] = []
// "Locked in the statement": a pool per store exactly as the store's take pool (its size too), for that variant only.
let lockedPools: PgPools[] = []
try {
  stores.push(await createPostgresStore({ connectionString: PG_URL, schema }))
  stores.push(await createPostgresStore({ connectionString: PG_URL, schema }))
  alonePools = [0, 1].map(() => createPools({ connectionString: PG_URL, takeConcurrency: CONCURRENCY }, schema))
  const grouped: Take[] = stores.map((store) => (request) => store.grants!.take(request))
  lockedPools = [0, 1].map(() =>
    createPools({ connectionString: PG_URL, takeConcurrency: DEFAULT_TAKE_CONCURRENCY }, schema),
  )
  const locked: Take[] = lockedPools.map((pools) => {
    const takes = new TakeGroups(pools.takes, DEFAULT_TAKE_CONCURRENCY, MAX_TAKE_GROUP, LOCKED_IN_STATEMENT)
    return (request) => takes.take(request)
  })
  const alone: Take[] = alonePools.map((pools) => {
    const takes = new TakeGroups(pools.takes, CONCURRENCY, 1)
    return (request) => takes.take(request)
  })
  // Warm-up: connections opened and statements prepared before anything is measured.
  for (const [k, takers] of [grouped, locked, alone].entries())
    for (let i = 0; i < 3; i++) {
      const { threadId, grantId } = await grantOf(stores[0]!, `warm-${k}-${i}`, CONCURRENCY)
      await Promise.all(
        Array.from({ length: CONCURRENCY }, (_, j) =>
          takers[j % 2]!({ grantId, owner: OWNER, threadId, toolCallId: `w-${j}`, runId: 'r', now: Date.now() }),
        ),
      )
    }
  console.log(`grant take on PostgreSQL, two stores on one schema (${PG_URL.replace(/\/\/[^@]*@/, '//')})`)
  console.log(`  ${ROUNDS} rounds of ${CONCURRENCY} takes at once (C: ${SEPARATE_ROUNDS} rounds); per take:`)
  const chosen = (process.env.BENCH_VARIANTS ?? 'grouped,locked,alone').split(',')
  const variants: Variant[] = [
    { key: 'grouped', name: 'grouped', takers: grouped },
    { key: 'locked', name: 'grouped, slots locked in the statement (before 0019)', takers: locked },
    { key: 'alone', name: 'alone', takers: alone },
  ].filter((variant) => chosen.includes(variant.key))
  const withoutLocked = variants.filter((variant) => variant.takers !== locked)
  for (const line of await scenario('A. grant of 3', variants, 3)) console.log(line)
  for (const line of await scenario(`B. grant of ${CONCURRENCY}`, withoutLocked, CONCURRENCY)) console.log(line)
  for (const line of await separate(`C. ${CONCURRENCY} grants of 1`, withoutLocked)) console.log(line)
  console.log(`D. floor, one SELECT 1 per store at once: ${await floor()}`)
} finally {
  for (const store of stores) await store.close()
  for (const pools of [...alonePools, ...lockedPools])
    await Promise.all([pools.pool.end(), pools.admission.end(), pools.takes.end()])
  await admin(`DROP SCHEMA IF EXISTS ${quoteIdent(schema)} CASCADE`)
}
