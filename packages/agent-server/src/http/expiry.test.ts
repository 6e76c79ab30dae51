import { randomBytes } from 'node:crypto'
import { afterEach, describe, expect, it } from 'vitest'
import { DECISION_EVENT_NAME, EventType, SYSTEM_EXPIRY_PRINCIPAL } from '@interlude/protocol'
import type { AgUiEvent, Interrupt, ThreadListPage, ThreadSnapshot, WebhookPayload } from '@interlude/protocol'
import { releaseAssistant, releaseAssistantScript } from '../demo/release-assistant.ts'
import { scriptedModel } from '../models/scripted.ts'
import type { InProcessOptions, InProcessServer } from '../test-utils/in-process.ts'
import { startInProcess } from '../test-utils/in-process.ts'
import { interruptsOf, newThreadId, resumeInput, runInput, textOf, userMessage } from '../test-utils/harness.ts'
import { recordingModel } from '../test-utils/recording-model.ts'
import { until } from '../test-utils/child-server.ts'
import type { WebhookReceiver } from '../test-utils/webhook-receiver.ts'
import { startWebhookReceiver } from '../test-utils/webhook-receiver.ts'
import { threadKey } from '../store/thread-key.ts'

/**
 * Deadlines (docs/approvals.md#deadlines) over `app.request` on SQLite, with an injected clock and the sweep run by
 * hand (`expirySweepMs: 0`), so nothing here waits for time to pass.
 */
const T0 = Date.parse('2032-03-01T09:00:00.000Z')
let clock = { now: T0 }
let server: InProcessServer | undefined
let receiver: WebhookReceiver | undefined

afterEach(async () => {
  await server?.dispose()
  server = undefined
  await receiver?.close()
  receiver = undefined
})

/** `start`: the clock's first reading (near the real time where a signature's timestamp is checked). */
async function serve(extra: InProcessOptions = {}, start = T0) {
  clock = { now: start }
  const model = recordingModel(scriptedModel(releaseAssistantScript))
  server = await startInProcess({
    agent: releaseAssistant({ model }),
    now: () => clock.now,
    interruptTtlSeconds: 2,
    expirySweepMs: 0,
    ...extra,
  })
  return { s: server, model }
}

async function paused(s: InProcessServer, text = 'deploy v2') {
  const threadId = newThreadId()
  const first = await s.postRun(runInput(threadId, [userMessage(text)]))
  const interrupts = interruptsOf(first.events)
  expect(interrupts.length).toBeGreaterThan(0)
  return { threadId, interrupts }
}

const snapshot = async (s: InProcessServer, threadId: string) =>
  (await (await s.request(`/threads/${threadId}`)).json()) as ThreadSnapshot

async function runEvents(s: InProcessServer, threadId: string, runId: string): Promise<AgUiEvent[]> {
  return (await s.store.readEvents(threadKey('alice', threadId), { runId })).map((e) => JSON.parse(e.json) as AgUiEvent)
}

const cancelledAll = (interrupts: readonly Interrupt[]) =>
  interrupts.map((i) => ({ interruptId: i.id, status: 'cancelled' as const }))

describe('onExpiry deny (the default for tool approvals)', () => {
  it('the sweep decides once as system:expiry, the model is told, the thread ends idle and takes new input', async () => {
    const { s, model } = await serve()
    const { threadId, interrupts } = await paused(s)
    expect(interrupts.map((i) => i.expiresAt)).toEqual([
      new Date(T0 + 2000).toISOString(),
      new Date(T0 + 2000).toISOString(),
    ])
    expect(interrupts.map((i) => i.metadata?.onExpiry)).toEqual(['deny', 'deny'])
    const batch = (await s.store.getOpenBatch(threadKey('alice', threadId)))!
    expect(batch.onExpiry).toBe('deny')

    // One millisecond early nothing is due.
    clock.now = T0 + 1999
    expect(await s.app.expirySweeper.sweepOnce()).toBe(0)
    clock.now = T0 + 2000
    // Past its deadline a deny batch is hidden: the sweep is about to decide it.
    expect((await snapshot(s, threadId)).interrupts).toBeUndefined()
    expect(await s.app.expirySweeper.sweepOnce()).toBe(1)
    await s.app.runs.idle()
    expect(await s.app.expirySweeper.sweepOnce()).toBe(0)

    const runId = `run_expiry_${batch.batchId}`
    const decisions = await s.store.listDecisions(threadKey('alice', threadId))
    expect(decisions).toHaveLength(1)
    expect(decisions[0]).toMatchObject({
      threadId: threadKey('alice', threadId),
      runId,
      decidedBy: SYSTEM_EXPIRY_PRINCIPAL,
      via: 'expiry',
      interruptIds: interrupts.map((i) => i.id),
      entries: interrupts.map((i) => ({
        interruptId: i.id,
        status: 'resolved',
        payload: { approved: false, reason: 'expired' },
      })),
    })
    expect((await s.store.getBatchOfInterrupt(threadKey('alice', threadId), interrupts[0]!.id))?.status).toBe('expired')

    // The continuation's model request carries both denials with reason "expired"; the summary names them.
    const told = model.requests[model.requests.length - 1]!.messages.filter((m) => m.role === 'tool')
    expect(told.map((m) => JSON.parse(String(m.content)) as unknown)).toEqual([
      { status: 'denied', reason: 'expired' },
      { status: 'denied', reason: 'expired' },
    ])
    const events = await runEvents(s, threadId, runId)
    expect(events[0]).toMatchObject({ type: EventType.RUN_STARTED, runId })
    // Every follower and replay sees who decided (docs/approvals.md#decision-records).
    expect(events[1]).toMatchObject({
      type: EventType.CUSTOM,
      name: DECISION_EVENT_NAME,
      value: { decidedBy: SYSTEM_EXPIRY_PRINCIPAL, via: 'expiry', runId },
    })
    expect(textOf(events)).toBe(
      'Nothing ran. Summary: publish_release v2 was denied (expired); deploy v2 to staging was denied (expired).',
    )
    expect(events[events.length - 1]).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: 'success' } })
    expect((await s.store.getRun(threadKey('alice', threadId), runId))?.status).toBe('succeeded')

    expect(await snapshot(s, threadId)).toMatchObject({ status: 'idle' })
    expect((await snapshot(s, threadId)).activeRunId).toBeUndefined()
    const next = await s.postRun(runInput(threadId, [userMessage('hello')]))
    expect(next.status).toBe(200)
    expect(textOf(next.events)).toMatch(/^I can publish and deploy releases/)
  })
})

describe('onExpiry cancel (the default for askUser)', () => {
  it('cancels every entry without another model call; the batch closes expired, the thread is idle', async () => {
    const { s, model } = await serve()
    const { threadId, interrupts } = await paused(s, 'ask me to choose an environment')
    expect(interrupts).toHaveLength(1)
    expect(interrupts[0]).toMatchObject({ reason: 'input_required', metadata: { onExpiry: 'cancel' } })
    expect((await s.store.getOpenBatch(threadKey('alice', threadId)))?.onExpiry).toBe('cancel')
    const calls = model.requests.length

    clock.now = T0 + 2000
    expect(await s.app.expirySweeper.sweepOnce()).toBe(1)
    await s.app.runs.idle()

    expect(model.requests).toHaveLength(calls)
    const [decision] = await s.store.listDecisions(threadKey('alice', threadId))
    expect(decision).toMatchObject({ via: 'expiry', entries: cancelledAll(interrupts) })
    expect((await s.store.getBatchOfInterrupt(threadKey('alice', threadId), interrupts[0]!.id))?.status).toBe('expired')
    const events = await runEvents(s, threadId, decision!.runId)
    expect(events.filter((e) => e.type === EventType.TOOL_CALL_RESULT)).toHaveLength(1)
    expect(events[events.length - 1]).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: 'success' } })
    expect(await snapshot(s, threadId)).toMatchObject({ status: 'idle' })
  })
})

describe('onExpiry keep', () => {
  it('stays open and shown past its deadline: new input is INTERRUPTS_PENDING, resolved is 410, cancelling closes it', async () => {
    const { s } = await serve({ onExpiry: 'keep' })
    const { threadId, interrupts } = await paused(s)
    expect(interrupts.map((i) => i.metadata?.onExpiry)).toEqual(['keep', 'keep'])

    clock.now = T0 + 60_000
    expect(await s.app.expirySweeper.sweepOnce()).toBe(0)
    expect((await snapshot(s, threadId)).interrupts).toEqual(interrupts)
    const inbox = (await (await s.request('/threads?status=interrupted')).json()) as ThreadListPage
    expect(inbox.threads.find((t) => t.threadId === threadId)?.interrupts).toEqual(interrupts)

    const blocked = await s.postRun(runInput(threadId, [userMessage('hello')]))
    expect(blocked.status).toBe(409)
    expect(blocked.error).toMatchObject({ code: 'INTERRUPTS_PENDING', details: { interrupts } })
    const late = await s.postRun(
      resumeInput(threadId, [
        { interruptId: interrupts[0]!.id, status: 'resolved', payload: { approved: true } },
        { interruptId: interrupts[1]!.id, status: 'cancelled' },
      ]),
    )
    expect(late.status).toBe(410)
    expect(late.error?.code).toBe('INTERRUPT_EXPIRED')
    expect(await s.store.listDecisions(threadKey('alice', threadId))).toEqual([])

    const closed = await s.postRun(resumeInput(threadId, cancelledAll(interrupts)))
    expect(closed.status).toBe(200)
    expect(closed.events[closed.events.length - 1]).toMatchObject({ type: EventType.RUN_FINISHED })
    expect((await s.store.getBatchOfInterrupt(threadKey('alice', threadId), interrupts[0]!.id))?.status).toBe('expired')
    expect(await s.store.listDecisions(threadKey('alice', threadId))).toMatchObject([
      { decidedBy: 'alice', via: 'run' },
    ])
    const next = await s.postRun(runInput(threadId, [userMessage('hello')]))
    expect(next.status).toBe(200)
  })
})

describe('first touch', () => {
  it('new input right after the deadline applies the policy at once (409 THREAD_BUSY), then the same input is admitted', async () => {
    const { s } = await serve()
    const { threadId } = await paused(s)
    const batch = (await s.store.getOpenBatch(threadKey('alice', threadId)))!
    clock.now = T0 + 2000
    const input = runInput(threadId, [userMessage('hello')])
    const busy = await s.postRun(input)
    expect(busy.status).toBe(409)
    expect(busy.error).toMatchObject({
      code: 'THREAD_BUSY',
      details: { activeRunId: `run_expiry_${batch.batchId}` },
    })
    await s.app.runs.idle()
    // The sweep finds nothing left to decide: first touch went through the same claim.
    expect(await s.app.expirySweeper.sweepOnce()).toBe(0)
    expect(await s.store.listDecisions(threadKey('alice', threadId))).toMatchObject([
      { via: 'expiry', decidedBy: 'system:expiry' },
    ])
    const admitted = await s.postRun(input)
    expect(admitted.status).toBe(200)
    expect(admitted.events[0]).toMatchObject({ type: EventType.RUN_STARTED, runId: input.runId })
  })

  it('before the sweep an all-cancelled answer is still admitted and a resolved one is 410', async () => {
    const { s } = await serve()
    const { threadId, interrupts } = await paused(s)
    clock.now = T0 + 2000
    const resolved = await s.postRun(
      resumeInput(
        threadId,
        interrupts.map((i) => ({ interruptId: i.id, status: 'resolved' as const, payload: { approved: false } })),
      ),
    )
    expect(resolved.error?.code).toBe('INTERRUPT_EXPIRED')
    const closed = await s.postRun(resumeInput(threadId, cancelledAll(interrupts)))
    expect(closed.status).toBe(200)
    expect(await s.app.expirySweeper.sweepOnce()).toBe(0)
    expect(await s.store.listDecisions(threadKey('alice', threadId))).toMatchObject([
      { decidedBy: 'alice', via: 'run' },
    ])
  })
})

describe('webhooks', () => {
  it('the expiry claim writes interrupt.expired with the decision record; it is delivered signed', async () => {
    const secret = `whsec_${randomBytes(32).toString('base64')}`
    receiver = await startWebhookReceiver(secret)
    const { s } = await serve(
      {
        webhooks: [{ url: receiver.url, secret, events: ['interrupt.expired'] }],
        webhookDelivery: { pollMs: 20 },
      },
      Date.now(),
    )
    const { threadId, interrupts } = await paused(s)
    clock.now += 2000
    expect(await s.app.expirySweeper.sweepOnce()).toBe(1)
    const [decision] = await s.store.listDecisions(threadKey('alice', threadId))
    const delivered = await until(() => receiver!.received[0], 'the interrupt.expired delivery')
    expect(delivered.verifyError).toBeUndefined()
    expect(delivered.payload as WebhookPayload).toEqual({
      type: 'interrupt.expired',
      timestamp: new Date(clock.now).toISOString(),
      // Receivers see the client's thread id, in the record too.
      data: { threadId, owner: 'alice', runId: decision!.runId, interrupts, decision: { ...decision!, threadId } },
    })
    await s.app.runs.idle()
  })
})
