import { afterEach, describe, expect, it } from 'vitest'
import { EventType } from '@interlude/protocol'
import type { ThreadSnapshot } from '@interlude/protocol'
import { defineTool } from '../agent/tool.ts'
import { createPostgresStore } from '../store/postgres/postgres-store.ts'
import type { Store } from '../store/store.ts'
import { threadKey } from '../store/thread-key.ts'
import { postDecision } from '../test-utils/decisions.ts'
import { interruptsOf, newThreadId, runInput, userMessage } from '../test-utils/harness.ts'
import type { InProcessServer } from '../test-utils/in-process.ts'
import { startInProcess } from '../test-utils/in-process.ts'
import { createTestSchema, PG_URL, pgAvailable, TEST_POOLS } from '../test-utils/pg.ts'
import { resolved } from '../test-utils/resume-entries.ts'
import { call, rightsAgent } from '../test-utils/rights-agents.ts'

/**
 * Reconciling an unknown effect needs the right to decide that call (docs/approvals.md#who-may-what): a reader who
 * became one by deciding another tool's batch cannot settle a deploy only `mgr` may approve.
 */
const pg = await pgAvailable('reconcile rights on PostgreSQL')
const cleanups: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

const backends: [string, () => Promise<Store | undefined>][] = [['SQLite', async () => undefined]]
if (pg)
  backends.push([
    'PostgreSQL',
    async () => {
      const { schema, drop } = await createTestSchema()
      cleanups.push(drop)
      return createPostgresStore({ connectionString: PG_URL, schema, ...TEST_POOLS })
    },
  ])

const publish = defineTool({
  name: 'publish',
  description: 'Publishes a release note.',
  parameters: { type: 'object' },
  approval: 'always',
  execute: () => ({ published: true }),
})

/** eng's thread whose run died while `call_deploy` ran: started, never settled. */
async function deadDeploy(store: Store, threadId: string): Promise<void> {
  const key = threadKey('eng', threadId)
  const runId = 'run-dead'
  const now = Date.now()
  await store.startInputRun({
    threadId: key,
    ownerId: 'eng',
    runId,
    parentRunId: undefined,
    expectedRevision: null,
    initialState: { log: [] },
    messages: [userMessage('deploy please', 'u1')],
    toolResults: [],
    now,
    executorId: 'exec-dead',
    leaseUntil: now - 1,
  })
  await store.appendEvents(key, runId, [
    { type: EventType.RUN_STARTED, json: JSON.stringify({ type: EventType.RUN_STARTED, threadId, runId }) },
  ])
  const toolCalls = [{ id: 'call_deploy', type: 'function' as const, function: { name: 'deploy', arguments: '{}' } }]
  await store.appendMessages(key, runId, [{ id: 'a1', role: 'assistant', toolCalls }])
  await store.insertToolCalls([
    {
      threadId: key,
      toolCallId: 'call_deploy',
      runId,
      messageId: 'a1',
      toolName: 'deploy',
      argsText: '{"env":"production"}',
      kind: 'server',
      status: 'pending',
      now,
    },
  ])
  expect(await store.beginEffect(key, 'call_deploy', runId, now)).toBe('started')
}

async function idle(s: InProcessServer, threadId: string): Promise<ThreadSnapshot> {
  // Bounded: at most 200 reads of the snapshot.
  for (let i = 0; i < 200; i++) {
    const snapshot = (await (await s.request(`/threads/${threadId}`, { principal: 'eng' })).json()) as ThreadSnapshot
    if (snapshot.status !== 'running') return snapshot
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
  throw new Error('the thread did not settle')
}

describe.each(backends)('reconcile needs the right to decide the call (%s)', (_name, makeStore) => {
  it('a reader of the thread who may not approve deploy cannot settle its unknown effect; mgr can', async () => {
    const given = await makeStore()
    const { agent } = rightsAgent({ extra: [publish] })
    const s = await startInProcess({
      agent,
      approvers: ['mgr', 'bob'],
      exclusive: false,
      ...(given ? { store: given } : {}),
    })
    cleanups.push(() => s.dispose())
    const threadId = newThreadId()
    await deadDeploy(s.store, threadId)
    expect((await idle(s, threadId)).unsettledEffects).toHaveLength(1)

    // bob becomes a reader by deciding a publish batch of the thread.
    const run = await s.postRun(runInput(threadId, [userMessage(call('publish', {}))]), { principal: 'eng' })
    const [interrupt] = interruptsOf(run.events)
    const decided = await postDecision(
      s,
      threadId,
      { runId: 'run_bob', resume: [resolved(interrupt!)] },
      { principal: 'bob', owner: 'eng' },
    )
    expect(decided.status).toBe(202)
    await idle(s, threadId)
    expect((await s.request(`/threads/${threadId}`, { principal: 'bob', owner: 'eng' })).status).toBe(200)

    const reconcile = (principal: 'bob' | 'mgr') =>
      s.request(`/threads/${threadId}/effects/call_deploy/reconcile`, {
        method: 'POST',
        principal,
        owner: 'eng',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ outcome: 'succeeded' }),
      })
    const byBob = await reconcile('bob')
    expect(byBob.status).toBe(404)
    expect((await idle(s, threadId)).unsettledEffects).toHaveLength(1)
    const byMgr = await reconcile('mgr')
    expect(byMgr.status).toBe(200)
    expect(await byMgr.json()).toMatchObject({ status: 'succeeded', reconciledBy: 'mgr' })
  })
})
