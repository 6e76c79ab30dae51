import { randomBytes, randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DECISION_EVENT_NAME, EventType } from '@interlude/protocol'
import type { Interrupt, ResumeEntry, RunView, ThreadSnapshot, WebhookPayload } from '@interlude/protocol'
import type { ReleaseState } from '../demo/release-assistant.ts'
import { createPostgresStore } from '../store/postgres/postgres-store.ts'
import { until } from '../test-utils/child-server.ts'
import type { JsonAnswer } from '../test-utils/decisions.ts'
import { getJson, postDecision } from '../test-utils/decisions.ts'
import { interruptsOf, newThreadId, resumeInput, runInput, userMessage } from '../test-utils/harness.ts'
import type { InProcessServer } from '../test-utils/in-process.ts'
import { startInProcess } from '../test-utils/in-process.ts'
import { createTestSchema, PG_URL, pgAvailable, TEST_POOLS } from '../test-utils/pg.ts'
import { resolved } from '../test-utils/resume-entries.ts'
import { tailSse } from '../test-utils/sse-tail.ts'
import type { WebhookReceiver } from '../test-utils/webhook-receiver.ts'
import { startWebhookReceiver } from '../test-utils/webhook-receiver.ts'
import { threadKey } from '../store/thread-key.ts'

/** The decider on eng's threads (threads are per owner: `?owner=`, docs/protocol.md#thread-ids). */
const MGR = { principal: 'mgr', owner: 'eng' } as const

/**
 * Approvals across replicas (docs/approvals.md): two servers, each with its own PostgreSQL store (pools, change
 * feed, run manager), on one schema. Decisions through the API and resume runs race across both and are decided by
 * the one atomic claim; a follower on one replica sees a decision admitted on the other.
 */
const available = await pgAvailable('approvals across PostgreSQL replicas')
let a: InProcessServer
let b: InProcessServer
let dropSchema: (() => Promise<void>) | undefined
let receiver: WebhookReceiver | undefined
const secret = `whsec_${randomBytes(32).toString('base64')}`

beforeAll(async () => {
  if (!available) return
  const { schema, drop } = await createTestSchema()
  dropSchema = drop
  receiver = await startWebhookReceiver(secret)
  const url = receiver.url
  const replica = async () =>
    startInProcess({
      store: await createPostgresStore({ connectionString: PG_URL, schema, ...TEST_POOLS }),
      approvers: ['mgr'],
      heartbeatMs: 50,
      webhooks: [{ url, secret }],
      webhookDelivery: { pollMs: 50 },
    })
  // One first, so the migration is not part of anything measured.
  a = await replica()
  b = await replica()
})
afterAll(async () => {
  await a?.close()
  await b?.close()
  await receiver?.close()
  await dropSchema?.()
})

async function pausedDeploy(): Promise<{ threadId: string; interrupts: Interrupt[] }> {
  const threadId = newThreadId()
  const first = await a.postRun(runInput(threadId, [userMessage('deploy v6 to production')]), { principal: 'eng' })
  const interrupts = interruptsOf(first.events)
  expect(interrupts).toHaveLength(2)
  return { threadId, interrupts }
}

/** One of 30 racing requests: its channel, its decision (by hash group) and what it got back. */
interface Attempt {
  readonly via: 'api' | 'run'
  readonly runId: string
  readonly group: string
  readonly entries: ResumeEntry[]
}

describe.skipIf(!available)('approvals across two PostgreSQL replicas', () => {
  it('30 concurrent decisions mixing the API and resume runs: one admitted, one deployment, typed 409s', async () => {
    const { threadId, interrupts } = await pausedDeploy()
    const [publish, deploy] = interrupts as [Interrupt, Interrupt]
    const decision = (version: string): ResumeEntry[] => [
      resolved(publish),
      resolved(deploy, { approved: true, editedArgs: { version, environment: 'staging' } }),
    ]
    const shared = `run_${randomUUID()}`
    const attempts: Attempt[] = Array.from({ length: 30 }, (_, i) => {
      const via = i % 2 === 0 ? 'api' : 'run'
      // Three groups of decisions; in the first, three API requests share one runId (an identical retry).
      const group = ['same', 'v7', `v8.${i}`][i % 3]!
      const runId = i === 0 || i === 6 || i === 12 ? shared : `run_${randomUUID()}`
      return { via, runId, group, entries: decision(group) }
    })
    const answers = await Promise.all(
      attempts.map(async (attempt, i): Promise<{ status: number; code: string | undefined; runId: unknown }> => {
        const replica = i % 4 < 2 ? a : b
        if (attempt.via === 'api') {
          const r: JsonAnswer = await postDecision(
            replica,
            threadId,
            { runId: attempt.runId, resume: attempt.entries },
            MGR,
          )
          return { status: r.status, code: r.error?.code, runId: r.error?.details ?? r.body }
        }
        const r = await replica.postRun(resumeInput(threadId, attempt.entries, { runId: attempt.runId }), {
          principal: 'eng',
        })
        return { status: r.status, code: r.error?.code, runId: r.error?.details }
      }),
    )
    const [record, ...more] = await a.store.listDecisions(threadKey('eng', threadId))
    expect(more).toEqual([])
    const winner = attempts.find((t) => t.runId === record!.runId)!
    expect(record).toMatchObject({ decidedBy: winner.via === 'api' ? 'mgr' : 'eng', via: winner.via })
    for (const [i, answer] of answers.entries()) {
      const attempt = attempts[i]!
      if (attempt.runId === winner.runId) {
        expect(answer.status).toBe(attempt.via === 'api' ? 202 : 200)
        continue
      }
      expect(answer.status).toBe(409)
      expect(answer.code).toBe(attempt.group === winner.group ? 'ALREADY_RESUMED' : 'DECISION_CONFLICT')
      expect(answer.runId).toEqual({ runId: winner.runId })
    }
    await until(
      async () =>
        (await getJson<RunView>(b, `/threads/${threadId}/runs/${winner.runId}?owner=eng`, 'mgr')).body.status ===
        'finished',
      'the admitted run to finish',
    )
    const snapshot = (await getJson<ThreadSnapshot>(b, `/threads/${threadId}`, 'eng')).body
    expect((snapshot.state as ReleaseState).deployments).toEqual([
      { operationId: deploy.toolCallId, version: winner.group, environment: 'staging' },
    ])
    expect(snapshot.decisions).toEqual([{ ...record!, threadId }])
    // One claim, one interrupt.decided, written with it on whichever replica won; each replica's sender may send it.
    const forThread = () =>
      receiver!.received.map((x) => x.payload as WebhookPayload).filter((p) => p.data.threadId === threadId)
    await until(() => forThread().length >= 2, 'the two deliveries of the thread')
    expect(receiver!.received.every((x) => x.verifyError === undefined)).toBe(true)
    const decided = forThread().filter((p) => p.type === 'interrupt.decided')
    // Receivers see the client's thread id in the record.
    expect(decided.map((p) => p.data.decision)).toEqual([{ ...record!, threadId }])
    expect(forThread().filter((p) => p.type === 'interrupt.opened')).toHaveLength(1)
  })

  it('a follower on B sees a decision admitted on A, the whole continuation and the next run, in order', async () => {
    const { threadId, interrupts } = await pausedDeploy()
    const tail = tailSse(await b.request(`/threads/${threadId}/events?follow=1`, { principal: 'mgr', owner: 'eng' }))
    const finished = () =>
      tail.frames.filter((f) => f.event.type === EventType.RUN_FINISHED || f.event.type === EventType.RUN_ERROR).length
    await tail.waitFor(() => finished() === 1, 'the replay of the paused run')
    const paused = tail.frames.length

    const runId = `run_${randomUUID()}`
    expect((await postDecision(a, threadId, { runId, resume: interrupts.map((i) => resolved(i)) }, MGR)).status).toBe(
      202,
    )
    await tail.waitFor(() => finished() === 2, 'the continuation, live from A')
    const resumed = tail.frames.slice(paused)
    expect(resumed[0]?.event).toEqual({ type: EventType.RUN_STARTED, threadId, runId })
    expect(resumed[1]?.event).toMatchObject({
      type: EventType.CUSTOM,
      name: DECISION_EVENT_NAME,
      value: { runId, decidedBy: 'mgr', via: 'api' },
    })
    expect(resumed[resumed.length - 1]?.event).toMatchObject({ type: EventType.RUN_FINISHED, runId })

    // Open after RUN_FINISHED: pings, then the owner's next run on A.
    const pings = tail.pings()
    await tail.waitFor((t) => t.pings() > pings, 'a ping while idle')
    const next = runInput(threadId, [userMessage('hello')])
    expect((await a.postRun(next, { principal: 'eng' })).status).toBe(200)
    await tail.waitFor(() => finished() === 3, 'the next run')
    expect(tail.ended()).toBe(false)

    // Strictly increasing, no gaps, no duplicates: exactly the log.
    expect(tail.frames.map((f) => f.id)).toEqual(tail.frames.map((_, i) => i + 1))
    const log = await b.threadEvents(threadId, { principal: 'eng' })
    expect(tail.frames.map((f) => f.event)).toEqual(log.events)
    await tail.cancel()
  })
})
