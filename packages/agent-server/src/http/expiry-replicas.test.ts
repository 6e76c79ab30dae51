import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bearerTokens } from '../auth/authenticate.ts'
import { releaseAssistant } from '../demo/release-assistant.ts'
import { createPostgresStore } from '../store/postgres/postgres-store.ts'
import { authHeader, interruptsOf, newThreadId, runInput, TOKENS, userMessage } from '../test-utils/harness.ts'
import { readRunResponse } from '../test-utils/in-process.ts'
import { createTestSchema, PG_URL, pgAvailable } from '../test-utils/pg.ts'
import type { AgentServer } from './app.ts'
import { createAgentServer } from './app.ts'
import { NO_PRINCIPAL_QUOTAS } from '../config/limits.ts'
import { threadKey } from '../store/thread-key.ts'

/**
 * Two replicas on one PostgreSQL database sweep the same due batches at the same time (docs/approvals.md#deadlines):
 * the claim decides, so each batch is decided exactly once and continued once, whichever replica won it.
 */
const available = await pgAvailable('expiry sweep on two PostgreSQL replicas')
const T0 = Date.parse('2032-09-01T08:00:00.000Z')
const clock = { now: T0 }
let replicas: AgentServer[] = []
let dropSchema: (() => Promise<void>) | undefined

beforeAll(async () => {
  if (!available) return
  const { schema, drop } = await createTestSchema()
  dropSchema = drop
  for (let i = 0; i < 2; i++) {
    const store = await createPostgresStore({ connectionString: PG_URL, schema, max: 6, admissionMax: 3 })
    const app = createAgentServer({
      agent: releaseAssistant(),
      store,
      authenticate: bearerTokens(TOKENS),
      now: () => clock.now,
      interruptTtlSeconds: 2,
      expirySweepMs: 0,
      // 24 pauses of one principal at once: the per-principal quotas (16 running runs across the replicas) would refuse
      // some of them with 429 when the machine is slow enough for them to overlap. This test is about the sweep.
      limits: { ...NO_PRINCIPAL_QUOTAS },
    })
    // One after the other, so the schema migrates once before the race.
    await app.ready()
    replicas.push(app)
  }
})
afterAll(async () => {
  for (const app of replicas) await app.close()
  replicas = []
  await dropSchema?.()
})

async function pausedOn(app: AgentServer): Promise<string> {
  const threadId = newThreadId()
  const response = await app.request(`http://localhost${app.basePath}/runs`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...authHeader('alice') },
    body: JSON.stringify(runInput(threadId, [userMessage('deploy v4 to production')])),
  })
  expect(response.status).toBe(200)
  expect(interruptsOf((await readRunResponse(response)).events)).toHaveLength(2)
  return threadId
}

describe.skipIf(!available)('two PostgreSQL replicas sweeping the same due batches', () => {
  it('decide each batch exactly once between them', async () => {
    const N = 24
    const threads = await Promise.all(Array.from({ length: N }, (_, i) => pausedOn(replicas[i % 2]!)))
    clock.now = T0 + 2000
    const [a, b] = replicas as [AgentServer, AgentServer]
    const rounds = await Promise.all([
      a.expirySweeper.sweepOnce(),
      b.expirySweeper.sweepOnce(),
      a.expirySweeper.sweepOnce(),
      b.expirySweeper.sweepOnce(),
    ])
    expect(rounds.reduce((x, y) => x + y, 0)).toBe(N)
    await Promise.all(replicas.map((app) => app.runs.idle()))

    const store = a.store
    for (const threadId of threads) {
      const decisions = await store.listDecisions(threadKey('alice', threadId))
      expect(decisions).toHaveLength(1)
      expect(decisions[0]).toMatchObject({ decidedBy: 'system:expiry', via: 'expiry' })
      expect(decisions[0]!.runId).toMatch(/^run_expiry_batch_/)
      expect(await store.getRun(threadKey('alice', threadId), decisions[0]!.runId)).toMatchObject({
        kind: 'resume',
        status: 'succeeded',
      })
      expect((await store.getThread(threadKey('alice', threadId)))?.status).toBe('idle')
    }
    expect(await store.listDueBatches({ now: clock.now, limit: 10 })).toEqual([])
    expect(await Promise.all(replicas.map((app) => app.expirySweeper.sweepOnce()))).toEqual([0, 0])
  })
})
