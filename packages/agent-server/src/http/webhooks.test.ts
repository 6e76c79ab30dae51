import { randomBytes, randomUUID } from 'node:crypto'
import { afterEach, describe, expect, it } from 'vitest'
import type { WebhookEventType, WebhookPayload } from '@interlude/protocol'
import type { AgentDefinition } from '../agent/agent.ts'
import type { ReleaseState } from '../demo/release-assistant.ts'
import { releaseAssistant } from '../demo/release-assistant.ts'
import type { ModelProvider } from '../models/model.ts'
import { createSqliteStore } from '../store/sqlite/sqlite-store.ts'
import { until } from '../test-utils/child-server.ts'
import { postDecision } from '../test-utils/decisions.ts'
import { interruptsOf, newThreadId, runInput, tempDir, userMessage } from '../test-utils/harness.ts'
import type { InProcessServer } from '../test-utils/in-process.ts'
import { startInProcess } from '../test-utils/in-process.ts'
import { resolved } from '../test-utils/resume-entries.ts'
import type { WebhookReceiver } from '../test-utils/webhook-receiver.ts'
import { freePort, startWebhookReceiver } from '../test-utils/webhook-receiver.ts'
import { threadKey } from '../store/thread-key.ts'

/** The decider on eng's threads (threads are per owner: `?owner=`, docs/protocol.md#thread-ids). */
const MGR = { principal: 'mgr', owner: 'eng' } as const

/**
 * Webhooks end to end (docs/approvals.md, "Webhooks"): the server's own writes fill the outbox, and a real receiver
 * verifies every delivery with the Standard Webhooks reference verifier — through an outage and a server restart.
 */
const secret = `whsec_${randomBytes(32).toString('base64')}`
const cleanups: (() => unknown)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

/** The release assistant, except that a message containing "explode" makes the model fail. */
function agent(): AgentDefinition<ReleaseState> {
  const base = releaseAssistant()
  const model: ModelProvider = {
    name: 'exploding',
    async *stream(request) {
      const last = request.messages[request.messages.length - 1]
      if (last?.role === 'user' && String(last.content).includes('explode')) throw new Error('boom (never sent)')
      yield* base.model.stream(request)
    },
  }
  return { ...base, model }
}

async function server(dbPath: string, url: string): Promise<InProcessServer> {
  const s = await startInProcess({
    dbPath,
    agent: agent(),
    approvers: ['mgr'],
    webhooks: [{ url, secret }],
    webhookDelivery: { pollMs: 20, retryBaseMs: 20, retryMaxMs: 200 },
  })
  cleanups.push(() => s.close())
  return s
}

async function receiver(port?: number): Promise<WebhookReceiver> {
  const r = await startWebhookReceiver(secret, port)
  cleanups.push(() => r.close())
  return r
}

const payloads = (r: WebhookReceiver) => r.received.map((request) => request.payload as WebhookPayload)
const ofType = (r: WebhookReceiver, type: WebhookEventType) => payloads(r).filter((p) => p.type === type)

async function pause(s: InProcessServer): Promise<{ threadId: string; runId: string }> {
  const input = runInput(newThreadId(), [userMessage('deploy v2 to production')])
  expect(interruptsOf((await s.postRun(input, { principal: 'eng' })).events)).toHaveLength(2)
  return { threadId: input.threadId, runId: input.runId }
}

async function decide(s: InProcessServer, threadId: string): Promise<string> {
  const open = (await s.store.getOpenBatch(threadKey('eng', threadId)))!.interrupts.map((i) => resolved(i.interrupt))
  const runId = `run_${randomUUID()}`
  expect((await postDecision(s, threadId, { runId, resume: open }, MGR)).status).toBe(202)
  await until(
    async () => (await s.store.getRun(threadKey('eng', threadId), runId))?.status === 'succeeded',
    'the decided run',
  )
  return runId
}

describe('webhooks end to end', () => {
  it('pause → interrupt.opened, decision → interrupt.decided, failing run → run.failed, each verified', async () => {
    const tmp = tempDir()
    cleanups.push(tmp.cleanup)
    const r = await receiver()
    const s = await server(tmp.dbPath, r.url)

    const paused = await pause(s)
    await until(() => ofType(r, 'interrupt.opened').length === 1, 'interrupt.opened')
    const [opened] = ofType(r, 'interrupt.opened')
    const batch = (await s.store.getOpenBatch(threadKey('eng', paused.threadId)))!
    expect(opened?.data).toEqual({
      threadId: paused.threadId,
      owner: 'eng',
      runId: paused.runId,
      interrupts: batch.interrupts.map((i) => i.interrupt),
    })

    const decidedRun = await decide(s, paused.threadId)
    await until(() => ofType(r, 'interrupt.decided').length === 1, 'interrupt.decided')
    const record = await s.store.getDecision(threadKey('eng', paused.threadId), decidedRun)
    expect(ofType(r, 'interrupt.decided')[0]?.data).toEqual({
      threadId: paused.threadId,
      owner: 'eng',
      runId: decidedRun,
      interrupts: batch.interrupts.map((i) => i.interrupt),
      // Receivers see the client's thread id, in the record too.
      decision: { ...record!, threadId: paused.threadId },
    })
    expect(record).toMatchObject({ decidedBy: 'mgr', via: 'api' })

    const failing = runInput(newThreadId(), [userMessage('please explode')])
    expect((await s.postRun(failing, { principal: 'alice' })).status).toBe(200)
    await until(() => ofType(r, 'run.failed').length === 1, 'run.failed')
    expect(ofType(r, 'run.failed')[0]?.data).toEqual({
      threadId: failing.threadId,
      owner: 'alice',
      runId: failing.runId,
      errorCode: 'MODEL_ERROR',
    })
    expect(JSON.stringify(r.received.map((x) => x.body))).not.toContain('boom')

    expect(r.received.every((request) => request.verifyError === undefined)).toBe(true)
    expect(payloads(r).map((p) => p.type)).toEqual(['interrupt.opened', 'interrupt.decided', 'run.failed'])
    expect(await s.store.listOutbox({ status: 'pending' })).toEqual([])
  })

  it('receiver down, server restarted meanwhile, receiver up: everything arrives, duplicates only by webhook-id', async () => {
    const tmp = tempDir()
    cleanups.push(tmp.cleanup)
    const port = await freePort()
    const url = `http://127.0.0.1:${port}/hooks`
    const first = await server(tmp.dbPath, url)

    // Nothing listens: every attempt is refused and retried.
    const paused = await pause(first)
    await decide(first, paused.threadId)
    const failing = runInput(newThreadId(), [userMessage('explode now')])
    await first.postRun(failing, { principal: 'alice' })
    await until(
      async () => (await first.store.listOutbox()).every((row) => row.attempts >= 1 && row.status === 'pending'),
      'refused attempts',
    )
    await first.close()

    // Between the two processes a run is left running by a process that died: the restart continues it
    // (docs/architecture.md, "Durable continuation"); its model fails again, so the continuation reports run.failed.
    const dead = createSqliteStore(tmp.dbPath)
    const deadThread = newThreadId()
    const started = await dead.startInputRun({
      threadId: threadKey('bob', deadThread),
      ownerId: 'bob',
      runId: 'run-of-a-dead-process',
      parentRunId: undefined,
      expectedRevision: null,
      initialState: {},
      messages: [userMessage('explode after the restart')],
      toolResults: [],
      now: Date.now(),
      executorId: 'exec-dead',
      leaseUntil: Date.now() - 1,
    })
    expect(started.ok).toBe(true)
    await dead.close()

    const second = await server(tmp.dbPath, url)
    const r = await receiver(port)
    const rows = await until(async () => {
      const all = await second.store.listOutbox()
      return all.length === 4 && all.every((row) => row.status === 'delivered') ? all : undefined
    }, 'every delivery')
    expect(rows.map((row) => row.eventType).sort()).toEqual([
      'interrupt.decided',
      'interrupt.opened',
      'run.failed',
      'run.failed',
    ])
    expect(r.received.every((request) => request.verifyError === undefined)).toBe(true)
    // Every stored delivery arrived; anything received twice carried the same id (and the same body).
    const ids = new Set(rows.map((row) => row.deliveryId))
    expect(new Set(r.countsById().keys())).toEqual(ids)
    for (const row of rows) {
      for (const request of r.received.filter((x) => x.headers['webhook-id'] === row.deliveryId)) {
        expect(request.body).toBe(row.payload)
      }
    }
    expect(ofType(r, 'run.failed').map((p) => p.data)).toContainEqual({
      threadId: deadThread,
      owner: 'bob',
      runId: 'run-of-a-dead-process',
      errorCode: 'MODEL_ERROR',
    })
  })

  it('bad webhook options are refused when the server is created, naming the option and never the secret', async () => {
    const url = 'https://hooks.example/a'
    const short = `whsec_${randomBytes(8).toString('base64')}`
    const bad: [Parameters<typeof startInProcess>[0], RegExp][] = [
      [
        { webhooks: [{ url: 'ftp://hooks.example/a', secret }] },
        /webhooks\[0\]\.url must be an absolute http\(s\) URL/,
      ],
      [{ webhooks: [{ url, secret: short }] }, /webhooks\[0\]: the signing secret must decode to at least 24 bytes/],
      [
        {
          webhooks: [
            { url, secret },
            { url, secret },
          ],
        },
        /webhooks\[1\]\.url repeats/,
      ],
      [{ webhooks: [{ url, secret, events: [] }] }, /events is empty/],
      [{ webhookDelivery: { concurrency: 0 } }, /concurrency/],
      [{ webhookDelivery: { timeoutMs: 20_000 } }, /lockMs must be at least 2 × timeoutMs/],
    ]
    for (const [options, message] of bad) {
      const error = await startInProcess(options).then(
        () => undefined,
        (e: unknown) => e,
      )
      expect(error).toBeInstanceOf(RangeError)
      expect((error as Error).message).toMatch(message)
      expect((error as Error).message).not.toContain(short.slice(6))
    }
  })
})
