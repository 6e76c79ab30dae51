import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DECISION_EVENT_NAME, EventType, STALE_INTERRUPT_REASON } from '@interlude/protocol'
import type { AgUiEvent, DecisionRecord, Interrupt, ThreadSnapshot } from '@interlude/protocol'
import { createFleet } from '../demo/fleet.ts'
import { releaseAssistant } from '../demo/release-assistant.ts'
import type { ReleaseState } from '../demo/release-assistant.ts'
import { createPostgresStore } from '../store/postgres/postgres-store.ts'
import { interruptsOf, newThreadId, resumeInput, runInput, toolResults, userMessage } from '../test-utils/harness.ts'
import type { InProcessServer } from '../test-utils/in-process.ts'
import { startInProcess } from '../test-utils/in-process.ts'
import { createTestSchema, PG_URL, pgAvailable } from '../test-utils/pg.ts'
import { resolved } from '../test-utils/resume-entries.ts'

/**
 * The stale-approval guard (docs/approvals.md#stale-approvals) with the demo agent, whose `deploy` observes the version
 * the target environment of a simulated fleet runs: thread A waits to deploy v2.1 to production while thread B
 * deploys v2.2 there; A's approval then runs nothing, records `stale` and asks again with before/after. On one SQLite
 * server, and on two PostgreSQL replicas (one schema; the fleet is the agent's, shared by both in this process).
 */

const decisionsIn = (events: readonly AgUiEvent[]): DecisionRecord[] =>
  events
    .filter((e) => e.type === EventType.CUSTOM && (e as { name: string }).name === DECISION_EVENT_NAME)
    .map((e) => (e as unknown as { value: DecisionRecord }).value)

async function snapshot(server: InProcessServer, threadId: string): Promise<ThreadSnapshot> {
  return (await (await server.request(`/threads/${threadId}`)).json()) as ThreadSnapshot
}

async function pausedDeploy(
  server: InProcessServer,
  version: string,
): Promise<{ threadId: string; batch: Interrupt[] }> {
  const threadId = newThreadId()
  const run = await server.postRun(runInput(threadId, [userMessage(`deploy ${version} to production`)]))
  expect(run.status).toBe(200)
  const batch = interruptsOf(run.events)
  expect(batch.map((i) => i.metadata?.toolName)).toEqual(['publish_release', 'deploy'])
  return { threadId, batch }
}

/** The scenario on `a` and `b` (the same server, or two replicas of one database). */
async function staleScenario(a: InProcessServer, b: InProcessServer): Promise<void> {
  const A = await pausedDeploy(a, 'v2.1')
  const deploy = A.batch[1]!
  expect(deploy.metadata?.observed).toEqual({ environment: 'production', running: 'v2.0' })

  // B deploys v2.2 to production while A waits.
  const B = await pausedDeploy(b, 'v2.2')
  const doneB = await b.postRun(
    resumeInput(
      B.threadId,
      B.batch.map((i) => resolved(i)),
    ),
  )
  expect(toolResults(doneB.events)).toHaveLength(2)

  // A's approval: nothing runs, the record says stale, the deploy is asked again with before/after.
  const approvedA = await b.postRun(
    resumeInput(
      A.threadId,
      A.batch.map((i) => resolved(i)),
    ),
  )
  expect(approvedA.status).toBe(200)
  expect(toolResults(approvedA.events)).toEqual([])
  const records = decisionsIn(approvedA.events)
  expect(records.at(-1)).toMatchObject({ outcome: 'stale', staleInterruptIds: [deploy.id] })
  const [reask] = interruptsOf(approvedA.events)
  expect(interruptsOf(approvedA.events)).toHaveLength(1)
  expect(reask).toMatchObject({
    reason: STALE_INTERRUPT_REASON,
    toolCallId: deploy.toolCallId,
    metadata: {
      toolName: 'deploy',
      before: { environment: 'production', running: 'v2.0' },
      after: { environment: 'production', running: 'v2.2' },
      observed: { environment: 'production', running: 'v2.2' },
    },
  })
  const paused = await snapshot(a, A.threadId)
  expect((paused.state as ReleaseState).deployments).toEqual([])
  expect((paused.state as ReleaseState).releases).toEqual([])
  expect(paused.decisions?.at(-1)).toMatchObject({ outcome: 'stale', staleInterruptIds: [deploy.id] })

  // Approving the re-ask runs the batch once, in the model's order: publish, then the deploy.
  const done = await a.postRun(resumeInput(A.threadId, [resolved(reask!)]))
  expect(toolResults(done.events).map((r) => r.toolCallId)).toEqual([A.batch[0]!.toolCallId, deploy.toolCallId])
  const after = (await snapshot(a, A.threadId)).state as ReleaseState
  expect(after.releases).toHaveLength(1)
  expect(after.deployments).toEqual([{ operationId: deploy.toolCallId, version: 'v2.1', environment: 'production' }])

  // Production runs v2.1 now: a new deploy observes it.
  const C = await pausedDeploy(a, 'v2.3')
  expect(C.batch[1]!.metadata?.observed).toEqual({ environment: 'production', running: 'v2.1' })
}

describe('stale approvals on one SQLite server', () => {
  let server: InProcessServer
  beforeAll(async () => {
    server = await startInProcess()
  })
  afterAll(async () => {
    await server.dispose()
  })

  it('thread B deploys v2.2 while A waits to deploy v2.1: A runs nothing, records stale, re-asks; approved, once', () =>
    staleScenario(server, server))

  it('an unchanged observation runs the approval as decided', async () => {
    const A = await pausedDeploy(server, 'v9')
    const done = await server.postRun(
      resumeInput(
        A.threadId,
        A.batch.map((i) => resolved(i)),
      ),
    )
    expect(toolResults(done.events)).toHaveLength(2)
    expect(decisionsIn(done.events).every((d) => d.outcome === undefined)).toBe(true)
  })
})

const pg = await pgAvailable('stale approvals across PostgreSQL replicas')

describe.skipIf(!pg)('stale approvals on two PostgreSQL replicas', () => {
  let a: InProcessServer
  let b: InProcessServer
  let drop: (() => Promise<void>) | undefined
  beforeAll(async () => {
    const test = await createTestSchema()
    drop = test.drop
    // One agent (one fleet) for both replicas, as every thread of a process shares it.
    const agent = releaseAssistant({ fleet: createFleet() })
    a = await startInProcess({
      agent,
      store: await createPostgresStore({ connectionString: PG_URL, schema: test.schema }),
    })
    b = await startInProcess({
      agent,
      store: await createPostgresStore({ connectionString: PG_URL, schema: test.schema }),
    })
  })
  afterAll(async () => {
    await a?.close()
    await b?.close()
    await drop?.()
  })

  it('A paused on one replica, B deploys on the other, A approved there: stale, re-asked, then once', () =>
    staleScenario(a, b))
})
