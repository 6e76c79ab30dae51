import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { TestServer } from '../test-utils/harness.ts'
import { newThreadId, postRun, runInput, startTestServer, userMessage } from '../test-utils/harness.ts'
import { openedWebhook } from '../test-utils/outside-server.ts'
import { createTestSchema, PG_URL, pgAvailable } from '../test-utils/pg.ts'
import { call, rightsAgent } from '../test-utils/rights-agents.ts'
import type { WebhookReceiver } from '../test-utils/webhook-receiver.ts'
import { freePort, startWebhookReceiver } from '../test-utils/webhook-receiver.ts'
import { threadKey } from '../store/thread-key.ts'

/**
 * Decision links across replicas (docs/approvals.md#decision-links): two real servers on one PostgreSQL schema share
 * the session secret; a link is spent once whichever replica takes it, even when both take it at the same moment.
 */
const available = await pgAvailable('decision links across PostgreSQL replicas')
const webhookSecret = `whsec_${randomBytes(32).toString('base64')}`
const sessionSecret = randomBytes(32).toString('base64url')
let a: TestServer
let b: TestServer
let receiver: WebhookReceiver
let dropSchema: (() => Promise<void>) | undefined

beforeAll(async () => {
  if (!available) return
  const { schema, drop } = await createTestSchema()
  dropSchema = drop
  receiver = await startWebhookReceiver(webhookSecret)
  const port = await freePort()
  const replica = (replicaPort: number) =>
    startTestServer({
      dbUrl: PG_URL,
      dbSchema: schema,
      port: replicaPort,
      agent: rightsAgent().agent,
      approvers: ['mgr'],
      // Both replicas make links on the same public URL (a load balancer in front of them).
      publicUrl: `http://127.0.0.1:${port}`,
      sessionSecret,
      webhooks: [{ url: receiver.url, secret: webhookSecret }],
      webhookDelivery: { pollMs: 20 },
    })
  a = await replica(port)
  b = await replica(0)
})
afterAll(async () => {
  await a?.dispose()
  await b?.dispose()
  await receiver?.close()
  await dropSchema?.()
})

/** eng's paused deploy on replica a, and the path of each of its links (to send to either replica). */
async function paused(): Promise<{ key: string; approve: string; deny: string }> {
  const threadId = newThreadId()
  await postRun(a, runInput(threadId, [userMessage(call('deploy', { env: 'production' }))]), { principal: 'eng' })
  const opened = await openedWebhook(receiver, threadId)
  const path = (action: string) => new URL(opened.data.links!.find((l) => l.action === action)!.url).pathname
  return { key: threadKey('eng', threadId), approve: path('approve'), deny: path('deny') }
}

const post = async (server: TestServer, path: string) =>
  (await fetch(`${server.url}${path}`, { method: 'POST' })).status

describe.skipIf(!available)('decision links on PostgreSQL replicas', () => {
  it('one link posted to both replicas at once decides once; the replay is 409 on either', async () => {
    const { key, approve } = await paused()
    const statuses = await Promise.all([post(a, approve), post(b, approve)])
    expect(statuses.sort()).toEqual([200, 409])
    const decisions = await a.store.listDecisions(key)
    expect(decisions.map((d) => [d.decidedBy, d.via])).toEqual([['mgr', 'link']])
    // The link's id is in its (signed, not secret) payload; its use is one row, seen by both replicas.
    const token = approve.slice(approve.lastIndexOf('/') + 1).split('.')[0]!
    const linkId = (JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as { l: string }).l
    expect((await b.store.decisionLinks.used(linkId))?.runId).toBe(decisions[0]!.runId)
    expect(await post(b, approve)).toBe(409)
    expect(await post(a, approve)).toBe(409)
  })

  it('a batch decided through one replica answers the other link 410 on the other replica', async () => {
    const { key, approve, deny } = await paused()
    expect(await post(a, deny)).toBe(200)
    expect(await post(b, approve)).toBe(410)
    const decisions = await b.store.listDecisions(key)
    expect(decisions).toHaveLength(1)
    expect(decisions[0]!.entries[0]!.payload).toEqual({ approved: false })
  })
})
