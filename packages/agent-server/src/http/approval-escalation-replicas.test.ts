import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { WebhookPayload } from '@interlude/protocol'
import { SYSTEM_ESCALATION_PRINCIPAL } from '@interlude/protocol'
import { createPostgresStore } from '../store/postgres/postgres-store.ts'
import { threadKey } from '../store/thread-key.ts'
import { postDecision } from '../test-utils/decisions.ts'
import { interruptsOf, newThreadId, runInput, userMessage } from '../test-utils/harness.ts'
import type { InProcessServer } from '../test-utils/in-process.ts'
import { startInProcess } from '../test-utils/in-process.ts'
import { createTestSchema, PG_URL, pgAvailable, TEST_POOLS } from '../test-utils/pg.ts'
import { resolved } from '../test-utils/resume-entries.ts'
import { call, rightsAgent } from '../test-utils/rights-agents.ts'
import type { WebhookReceiver } from '../test-utils/webhook-receiver.ts'
import { startWebhookReceiver } from '../test-utils/webhook-receiver.ts'

/**
 * Escalations and reminders across replicas (docs/approvals.md#organisation-policies): two servers on one PostgreSQL
 * schema, both sweeping every 20 ms. The escalation record and each webhook are written once, whichever replica's
 * sweep comes first; the new decider's vote continues the turn once.
 */
const available = await pgAvailable('escalations across PostgreSQL replicas')
const secret = `whsec_${randomBytes(32).toString('base64')}`
const { agent, ran } = rightsAgent({
  deploy: {
    approvers: undefined,
    timeout: 3600,
    policy: { of: ['bob'], escalate: { after: 0.05, to: ['mgr'] }, remind: { before: 3599.9 } },
  },
})
let a: InProcessServer
let b: InProcessServer
let receiver: WebhookReceiver
let dropSchema: (() => Promise<void>) | undefined

beforeAll(async () => {
  receiver = await startWebhookReceiver(secret)
  if (!available) return
  const { schema, drop } = await createTestSchema()
  dropSchema = drop
  const replica = async () =>
    startInProcess({
      store: await createPostgresStore({ connectionString: PG_URL, schema, ...TEST_POOLS }),
      agent,
      approvers: ['alice', 'bob', 'mgr'],
      expirySweepMs: 20,
      webhooks: [{ url: receiver.url, secret }],
      webhookDelivery: { pollMs: 20 },
    })
  a = await replica()
  b = await replica()
})
afterAll(async () => {
  await a?.close()
  await b?.close()
  await receiver.close()
  await dropSchema?.()
})

const deliveries = (threadId: string, type: WebhookPayload['type']) =>
  receiver.received.filter((x) => {
    const payload = x.payload as WebhookPayload | undefined
    return payload?.type === type && payload.data.threadId === threadId
  })

describe.skipIf(!available)('escalations and reminders across two PostgreSQL replicas', () => {
  it('one escalation record, one escalated and one reminder webhook; the new decider continues once', async () => {
    const threadId = newThreadId()
    const run = await a.postRun(runInput(threadId, [userMessage(call('deploy', { env: 'production' }))]), {
      principal: 'alice',
    })
    const [interrupt] = interruptsOf(run.events)
    await expect.poll(() => deliveries(threadId, 'interrupt.escalated').length, { timeout: 15_000 }).toBeGreaterThan(0)
    await expect.poll(() => deliveries(threadId, 'interrupt.reminder').length, { timeout: 15_000 }).toBeGreaterThan(0)

    // mgr (the escalation's decider) decides on B; bob (replaced) is refused on A.
    const bob = await postDecision(
      a,
      threadId,
      { runId: 'run_bob', resume: [resolved(interrupt!)] },
      { principal: 'bob', owner: 'alice' },
    )
    expect(bob.status).toBe(404)
    const mgr = await postDecision(
      b,
      threadId,
      { runId: 'run_mgr', resume: [resolved(interrupt!)] },
      { principal: 'mgr', owner: 'alice' },
    )
    expect(mgr.status).toBe(202)
    await expect.poll(() => ran, { timeout: 15_000 }).toEqual([{ principal: 'alice', env: 'production' }])

    const records = await a.store.listDecisions(threadKey('alice', threadId))
    expect(records.map((r) => [r.decidedBy, r.stage])).toEqual([
      [SYSTEM_ESCALATION_PRINCIPAL, 1],
      ['mgr', 1],
    ])
    // Each webhook was written once: every delivery of it carries the same webhook-id, and verifies.
    for (const type of ['interrupt.escalated', 'interrupt.reminder'] as const) {
      const got = deliveries(threadId, type)
      expect(new Set(got.map((x) => x.headers['webhook-id'])).size).toBe(1)
      expect(got.every((x) => x.verifyError === undefined)).toBe(true)
    }
  })
})
