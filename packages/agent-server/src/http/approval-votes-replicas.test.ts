import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { DecisionAccepted } from '@interlude/protocol'
import { createPostgresStore } from '../store/postgres/postgres-store.ts'
import { threadKey } from '../store/thread-key.ts'
import { postDecision } from '../test-utils/decisions.ts'
import { interruptsOf, newThreadId, resumeInput, runInput, userMessage } from '../test-utils/harness.ts'
import type { InProcessServer } from '../test-utils/in-process.ts'
import { startInProcess } from '../test-utils/in-process.ts'
import { createTestSchema, PG_URL, pgAvailable, TEST_POOLS } from '../test-utils/pg.ts'
import { resolved } from '../test-utils/resume-entries.ts'
import { call, rightsAgent } from '../test-utils/rights-agents.ts'

/**
 * Votes across replicas (docs/approvals.md#organisation-policies): two servers, each with its own PostgreSQL store,
 * on one schema, one agent (so `ran` sees both). A quorum of 2 among alice, bob and mgr on eng's deploy; 20 votes at
 * once, spread over both replicas and both channels: two are written, the second claims the batch, one deployment.
 */
const available = await pgAvailable('votes across PostgreSQL replicas')
const { agent, ran } = rightsAgent({
  deploy: { approvers: undefined, policy: { quorum: 2, of: ['alice', 'bob', 'mgr'], notRequester: true } },
})
let a: InProcessServer
let b: InProcessServer
let dropSchema: (() => Promise<void>) | undefined

beforeAll(async () => {
  if (!available) return
  const { schema, drop } = await createTestSchema()
  dropSchema = drop
  const replica = async () =>
    startInProcess({
      store: await createPostgresStore({ connectionString: PG_URL, schema, ...TEST_POOLS }),
      agent,
      approvers: ['alice', 'bob', 'mgr'],
      heartbeatMs: 50,
    })
  a = await replica()
  b = await replica()
})
afterAll(async () => {
  await a?.close()
  await b?.close()
  await dropSchema?.()
})

const VOTERS = ['alice', 'bob', 'mgr'] as const

describe.skipIf(!available)('votes across two PostgreSQL replicas', () => {
  it('20 concurrent votes: one continuation, one deployment, two vote records, no 5xx', async () => {
    const threadId = newThreadId()
    const first = await a.postRun(runInput(threadId, [userMessage(call('deploy', { env: 'production' }))]), {
      principal: 'eng',
    })
    const [interrupt] = interruptsOf(first.events)
    const answers = await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const replica = i % 2 === 0 ? a : b
        const principal = VOTERS[i % 3]!
        const runId = `run_${randomUUID()}`
        if (i % 4 === 3) {
          const r = await replica.postRun(resumeInput(threadId, [resolved(interrupt!)], { runId }), {
            principal,
            owner: 'eng',
          })
          return { status: r.status, code: r.error?.code, decided: r.status === 200 }
        }
        const r = await postDecision<DecisionAccepted>(
          replica,
          threadId,
          { runId, resume: [resolved(interrupt!)] },
          { principal, owner: 'eng' },
        )
        return { status: r.status, code: r.error?.code, decided: r.status === 202 && r.body.pending === undefined }
      }),
    )
    expect(answers.filter((x) => x.status >= 500)).toEqual([])
    // Every refusal is typed: a second vote of the same voter, or a vote after the batch was decided.
    for (const answer of answers.filter((x) => x.status !== 200 && x.status !== 202))
      expect(['ALREADY_VOTED', 'ALREADY_RESUMED', 'DECISION_CONFLICT', 'THREAD_BUSY']).toContain(answer.code)
    expect(answers.filter((x) => x.decided)).toHaveLength(1)

    const key = threadKey('eng', threadId)
    const records = await b.store.listDecisions(key)
    expect(records.filter((r) => r.vote)).toHaveLength(2)
    expect(new Set(records.map((r) => r.decidedBy)).size).toBe(2)
    expect(records.some((r) => r.decidedBy === 'eng')).toBe(false)
    await expect.poll(() => ran, { timeout: 15_000 }).toEqual([{ principal: 'eng', env: 'production' }])
    const continuation = records.at(-1)!
    await expect
      .poll(async () => (await a.store.getRun(key, continuation.runId))?.status, { timeout: 15_000 })
      .toBe('succeeded')
    expect(ran).toHaveLength(1)
  })
})
