import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { DecisionAccepted, PendingBatchPage, ThreadSnapshot, WebhookPayload } from '@interlude/protocol'
import { SYSTEM_ESCALATION_PRINCIPAL } from '@interlude/protocol'
import type { DecisionPolicy } from '../agent/decision-policy.ts'
import { getJson, postDecision } from '../test-utils/decisions.ts'
import { interruptsOf, newThreadId, runInput, userMessage } from '../test-utils/harness.ts'
import type { InProcessServer } from '../test-utils/in-process.ts'
import { serversPerTest } from '../test-utils/in-process.ts'
import { resolved } from '../test-utils/resume-entries.ts'
import { call, rightsAgent } from '../test-utils/rights-agents.ts'
import type { WebhookReceiver } from '../test-utils/webhook-receiver.ts'
import { startWebhookReceiver } from '../test-utils/webhook-receiver.ts'

/**
 * The timed parts of organisation policies (docs/approvals.md#organisation-policies): an escalation on a short
 * `after` and a reminder before a deadline, each a webhook verified with `standardwebhooks`. SQLite, real routes.
 */
const secret = `whsec_${randomBytes(32).toString('base64')}`
let receiver: WebhookReceiver
beforeAll(async () => {
  receiver = await startWebhookReceiver(secret)
})
afterAll(async () => {
  await receiver.close()
})

const server = serversPerTest({ approvers: ['alice', 'bob', 'mgr'] })
const start = (policy: DecisionPolicy, timeout = 3600) => {
  const { agent, ran } = rightsAgent({ deploy: { approvers: undefined, timeout, policy } })
  const s = server({
    agent,
    expirySweepMs: 20,
    webhooks: [{ url: receiver.url, secret }],
    webhookDelivery: { pollMs: 20 },
  })
  return { s, ran }
}

async function paused(s: InProcessServer) {
  const threadId = newThreadId()
  const run = await s.postRun(runInput(threadId, [userMessage(call('deploy', { env: 'production' }))]), {
    principal: 'alice',
  })
  return { threadId, interrupt: interruptsOf(run.events)[0]! }
}

const deliveries = (threadId: string, type: WebhookPayload['type']) =>
  receiver.received
    .map((x) => ({ payload: x.payload as WebhookPayload | undefined, verifyError: x.verifyError }))
    .filter((x) => x.payload?.data.threadId === threadId && x.payload.type === type)

describe('escalate: { after, to }', () => {
  it('nobody decided in time: the right moves to mgr, bob gets 404, mgr decides', async () => {
    const { s: pending, ran } = start({ of: ['bob'], escalate: { after: 0.05, to: ['mgr'] } })
    const s = await pending
    const { threadId, interrupt } = await paused(s)
    await expect.poll(() => deliveries(threadId, 'interrupt.escalated').length, { timeout: 10_000 }).toBe(1)
    const [escalated] = deliveries(threadId, 'interrupt.escalated')
    expect(escalated!.verifyError).toBeUndefined()
    // The policy has no `remind`: the sweeps that escalated sent no reminder.
    expect(deliveries(threadId, 'interrupt.reminder')).toEqual([])
    expect(escalated!.payload!.data).toMatchObject({
      owner: 'alice',
      interrupts: [{ id: interrupt.id }],
      decision: { decidedBy: SYSTEM_ESCALATION_PRINCIPAL, via: 'expiry', stage: 1, entries: [] },
    })

    const snapshot = await getJson<ThreadSnapshot>(s, `/threads/${threadId}`, 'alice')
    expect(snapshot.body.decisions).toMatchObject([{ decidedBy: SYSTEM_ESCALATION_PRINCIPAL, stage: 1 }])
    // The earlier decider sees nothing any more.
    const bob = { principal: 'bob', owner: 'alice' } as const
    const late = await postDecision(s, threadId, { runId: 'run_bob', resume: [resolved(interrupt)] }, bob)
    expect(late).toMatchObject({ status: 404, error: { code: 'THREAD_NOT_FOUND' } })
    expect((await getJson(s, `/threads/${threadId}?owner=alice`, 'bob')).status).toBe(404)
    const bobInbox = await getJson<PendingBatchPage>(s, '/interrupts?status=pending', 'bob')
    expect(bobInbox.body.items.map((b) => b.threadId)).not.toContain(threadId)

    const decided = await postDecision<DecisionAccepted>(
      s,
      threadId,
      { runId: 'run_mgr', resume: [resolved(interrupt)] },
      { principal: 'mgr', owner: 'alice' },
    )
    expect(decided.status).toBe(202)
    expect(decided.body.pending).toBeUndefined()
    await expect.poll(() => ran, { timeout: 15_000 }).toEqual([{ principal: 'alice', env: 'production' }])
    const after = await getJson<ThreadSnapshot>(s, `/threads/${threadId}`, 'alice')
    expect(after.body.decisions?.map((d) => [d.decidedBy, d.stage])).toEqual([
      [SYSTEM_ESCALATION_PRINCIPAL, 1],
      ['mgr', 1],
    ])
  })
})

describe('remind: { before }', () => {
  it('an interrupt.reminder before the deadline, while the batch is open', async () => {
    const { s: pending, ran } = start({ remind: { before: 3599.95 } })
    const s = await pending
    const { threadId, interrupt } = await paused(s)
    await expect.poll(() => deliveries(threadId, 'interrupt.reminder').length, { timeout: 10_000 }).toBe(1)
    const [reminder] = deliveries(threadId, 'interrupt.reminder')
    expect(reminder!.verifyError).toBeUndefined()
    expect(reminder!.payload!.data).toMatchObject({ owner: 'alice', interrupts: [{ id: interrupt.id }] })
    // The reminder is no decision: the thread lists none, and the owner decides as usual.
    const snapshot = await getJson<ThreadSnapshot>(s, `/threads/${threadId}`, 'alice')
    expect(snapshot.body.decisions).toBeUndefined()
    const decided = await postDecision(s, threadId, { runId: 'run_own', resume: [resolved(interrupt)] }, 'alice')
    expect(decided.status).toBe(202)
    await expect.poll(() => ran, { timeout: 15_000 }).toHaveLength(1)
  })
})
