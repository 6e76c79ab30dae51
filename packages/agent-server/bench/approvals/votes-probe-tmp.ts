/**
 * Votes under an organisation policy (docs/approvals.md#organisation-policies). Not a test. Run from
 * packages/agent-server:  node --import tsx bench/approvals/votes-bench.ts
 *
 * One SQLite server in this process (`app.request`): the release assistant with `--production-quorum 2` (approvers
 * alice, bob, mgr). Each round pauses BENCH_INTERRUPTS (50) threads of eng on "deploy … to production" (a batch of a
 * publish and a quorum deploy), then sends 2 votes per deploy at once — alice's and bob's, each answering the whole
 * batch — so 100 concurrent votes across 50 interrupts: per batch, one vote that is stored alone and one that settles
 * the batch and starts its continuation, in whatever order they race. Measured per vote: the server's admission time
 * (`Server-Timing: admission;dur=`) and the client's time to the `202`. BENCH_ROUNDS (5) rounds after a warm-up.
 */
import { randomUUID } from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import type { Interrupt } from '@interlude/protocol'
import { bearerTokens } from '../../src/auth/authenticate.ts'
import { NO_PRINCIPAL_QUOTAS } from '../../src/config/limits.ts'
import { createFleet } from '../../src/demo/fleet.ts'
import { releaseAssistant } from '../../src/demo/release-assistant.ts'
import { createAgentServer } from '../../src/http/app.ts'
import { createLogger } from '../../src/observability/logger.ts'
import { createSqliteStore } from '../../src/store/sqlite/sqlite-store.ts'
import { admissionTiming, median, percentile } from '../bench-utils.ts'

const INTERRUPTS = Number(process.env.BENCH_INTERRUPTS ?? 50)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)
const APPROVERS = ['alice', 'bob', 'mgr']
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'interlude-votes-bench-'))
const app = createAgentServer({
  agent: releaseAssistant({ pacingMs: 0, productionQuorum: 2, approvers: APPROVERS, fleet: createFleet() }),
  store: createSqliteStore(path.join(dir, 'votes.db')),
  approvers: APPROVERS,
  limits: NO_PRINCIPAL_QUOTAS,
  authenticate: bearerTokens(Object.fromEntries(['eng', ...APPROVERS].map((p) => [p, `${p}-secret`]))),
  logError: (message, error) => console.error(message, error),
  logger: createLogger({ level: 'silent' }),
})
await app.ready()

const call = (principal: string, pathname: string, body: unknown) =>
  app.request(`http://localhost${app.basePath}${pathname}`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${principal}-secret`, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  })

async function pause(): Promise<{ threadId: string; interrupts: Interrupt[] }> {
  const threadId = `votes-${randomUUID()}`
  const messages = [{ id: randomUUID(), role: 'user', content: 'deploy v2.1 to production' }]
  const response = await call('eng', '/runs', { threadId, runId: randomUUID(), messages })
  const last = JSON.parse((await response.text()).trim().split('\n\n').pop()!.split('data: ')[1]!) as {
    outcome?: { interrupts: Interrupt[] }
  }
  if (!last.outcome) throw new Error('the run did not pause')
  return { threadId, interrupts: last.outcome.interrupts }
}

interface Round {
  readonly server: number[]
  /** Server time of the votes stored alone, and of those that settled a batch. */
  readonly alone: number[]
  readonly settling: number[]
  readonly client: number[]
  readonly stored: number
  readonly settled: number
  readonly refused: number
}

async function round(): Promise<Round> {
  const paused = await Promise.all(Array.from({ length: INTERRUPTS }, pause))
  const server: number[] = []
  const alone: number[] = []
  const settling: number[] = []
  const client: number[] = []
  let stored = 0
  let settled = 0
  let refused = 0
  await Promise.all(
    paused.flatMap(({ threadId, interrupts }) =>
      ['alice', 'bob'].map(async (voter) => {
        const resume = interrupts.map((i) => ({ interruptId: i.id, status: 'resolved', payload: { approved: true } }))
        const started = performance.now()
        const response = await call(voter, `/threads/${threadId}/decisions?owner=eng`, { runId: randomUUID(), resume })
        const body = (await response.json()) as { pending?: unknown[] }
        client.push(performance.now() - started)
        const admission = admissionTiming(response)
        if (admission !== undefined) server.push(admission)
        if (response.status !== 202) refused += 1
        else if (body.pending !== undefined) {
          stored += 1
          if (admission !== undefined) alone.push(admission)
        } else {
          settled += 1
          if (admission !== undefined) settling.push(admission)
        }
      }),
    ),
  )
  return { server, alone, settling, client, stored, settled, refused }
}

const ms = (n: number) => `${n.toFixed(2)} ms`
await round() // warm-up
const all: Round[] = []
for (let r = 0; r < ROUNDS; r++) all.push(await round())
const server = all.flatMap((r) => r.server)
const client = all.flatMap((r) => r.client)
const sum = (key: 'stored' | 'settled' | 'refused') => all.reduce((n, r) => n + r[key], 0)
console.log(
  `${ROUNDS} rounds of ${INTERRUPTS * 2} concurrent votes across ${INTERRUPTS} interrupts (SQLite): ` +
    `${sum('stored')} stored alone, ${sum('settled')} settled a batch, ${sum('refused')} refused`,
)
const line = (xs: number[]) => `median ${ms(median(xs))}, p99 ${ms(percentile(xs, 99))}`
console.log(`  admission (server): ${line(server)}`); console.log([...server].sort((a, b) => b - a).slice(0, 25).map((x) => x.toFixed(1)).join(" "))
console.log(`    stored alone: ${line(all.flatMap((r) => r.alone))}; settling: ${line(all.flatMap((r) => r.settling))}`)
console.log(`  to the 202 (client): ${line(client)}`)
await app.close()
fs.rmSync(dir, { recursive: true, force: true })
