/**
 * `POST {base}/threads/:threadId/effects/:toolCallId/reconcile` (docs/protocol.md): an effect whose outcome is
 * unknown (its run died while the tool ran) is settled by hand, never re-run; owner or decider only, typed
 * errors, idempotent, recorded in the ledger. The dead run is written through the store, as a killed process
 * leaves it (the SIGKILL cases are in crash-recovery.test.ts); the server meets it on first touch. Over a SQLite
 * file and over the real PostgreSQL (own schema per test).
 */
import { afterEach, describe, expect, it } from 'vitest'
import { EventType } from '@interlude/protocol'
import type { ThreadSnapshot } from '@interlude/protocol'
import type { ToolDefinition } from '../agent/tool.ts'
import { createPostgresStore } from '../store/postgres/postgres-store.ts'
import type { Store } from '../store/store.ts'
import { newThreadId, userMessage } from '../test-utils/harness.ts'
import type { InProcessServer } from '../test-utils/in-process.ts'
import { startInProcess } from '../test-utils/in-process.ts'
import { createTestSchema, PG_URL, pgAvailable, TEST_POOLS } from '../test-utils/pg.ts'
import { commandAgent } from '../test-utils/test-agents.ts'
import { threadKey } from '../store/thread-key.ts'

const pg = await pgAvailable('effects reconcile on PostgreSQL')
const cleanups: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

const backends: [string, () => Promise<Store | undefined>][] = [
  ['SQLite', async () => undefined],
  [
    'PostgreSQL',
    async () => {
      const { schema, drop } = await createTestSchema()
      cleanups.push(drop)
      return createPostgresStore({ connectionString: PG_URL, schema, ...TEST_POOLS })
    },
  ],
]

async function serve(store: Store | undefined, executions: { count: number }): Promise<InProcessServer> {
  const deploy: ToolDefinition = {
    name: 'deploy',
    description: 'deploy',
    parameters: { type: 'object' },
    execute: () => ++executions.count,
  }
  const s = await startInProcess({
    agent: commandAgent([deploy]),
    exclusive: false,
    approvers: ['mgr'],
    ...(store ? { store } : {}),
  })
  cleanups.push(() => s.dispose())
  return s
}

/** A run killed while `call_deploy` ran (started, never settled) and before `call_later` started. */
async function deadRun(store: Store, threadId: string): Promise<void> {
  const runId = 'run-dead'
  const now = Date.now()
  await store.startInputRun({
    threadId: threadKey('alice', threadId),
    ownerId: 'alice',
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
  await store.appendEvents(threadKey('alice', threadId), runId, [
    { type: EventType.RUN_STARTED, json: JSON.stringify({ type: EventType.RUN_STARTED, threadId, runId }) },
  ])
  await store.appendMessages(threadKey('alice', threadId), runId, [
    {
      id: 'a1',
      role: 'assistant',
      toolCalls: ['call_deploy', 'call_later'].map((id) => ({
        id,
        type: 'function' as const,
        function: { name: 'deploy', arguments: '{}' },
      })),
    },
  ])
  await store.insertToolCalls(
    ['call_deploy', 'call_later'].map((toolCallId) => ({
      threadId: threadKey('alice', threadId),
      toolCallId,
      runId,
      messageId: 'a1',
      toolName: 'deploy',
      argsText: '{}',
      kind: 'server' as const,
      status: 'pending' as const,
      now,
    })),
  )
  expect(await store.beginEffect(threadKey('alice', threadId), 'call_deploy', runId, now)).toBe('started')
}

const reconcile = (
  s: InProcessServer,
  threadId: string,
  toolCallId: string,
  body: unknown,
  principal = 'alice',
  owner?: string,
) =>
  s.request(`/threads/${threadId}/effects/${toolCallId}/reconcile`, {
    method: 'POST',
    principal: principal as 'alice',
    ...(owner !== undefined ? { owner } : {}),
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  })

const snapshotOf = async (s: InProcessServer, threadId: string) =>
  (await (await s.request(`/threads/${threadId}`)).json()) as ThreadSnapshot

/**
 * First touch: the dead run is taken over and continued (docs/architecture.md, "Durable continuation"): the started
 * call becomes unknown, the never-started one runs once. Waits until that continuation has ended.
 */
async function touchAndSettle(s: InProcessServer, threadId: string): Promise<ThreadSnapshot> {
  for (let i = 0; i < 200; i++) {
    const snapshot = await snapshotOf(s, threadId)
    if (snapshot.status === 'idle') return snapshot
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
  throw new Error('the continuation of the dead run did not end')
}

const errorCode = async (res: Response) => ((await res.json()) as { error: { code: string } }).error.code

describe.each(backends)('reconcile an unknown effect (%s)', (name, makeStore) => {
  it.skipIf(name === 'PostgreSQL' && !pg)(
    'the owner records the outcome; it leaves unsettledEffects, is never re-run, and the same reconcile answers the same',
    async () => {
      const executions = { count: 0 }
      const s = await serve(await makeStore(), executions)
      const threadId = newThreadId()
      await deadRun(s.store, threadId)
      expect((await touchAndSettle(s, threadId)).unsettledEffects).toEqual([
        { toolCallId: 'call_deploy', toolName: 'deploy', status: 'unknown' },
      ])

      const body = { outcome: 'succeeded', result: { deployed: 'v2.1', checkedIn: 'console' } }
      const first = await reconcile(s, threadId, 'call_deploy', body)
      expect(first.status).toBe(200)
      const answer = (await first.json()) as { toolCallId: string; status: string; reconciledBy: string; at: string }
      expect(answer).toMatchObject({ toolCallId: 'call_deploy', status: 'succeeded', reconciledBy: 'alice' })
      expect(Number.isNaN(Date.parse(answer.at))).toBe(false)

      expect((await snapshotOf(s, threadId)).unsettledEffects).toBeUndefined()
      const call = await s.store.getToolCall(threadKey('alice', threadId), 'call_deploy')
      expect(call?.status).toBe('succeeded')
      expect(JSON.parse(call!.result!)).toEqual({
        status: 'succeeded',
        reconciled: { by: 'alice', at: answer.at },
        result: body.result,
      })
      // call_later (never started) ran once in the continuation; call_deploy never ran again.
      expect(executions.count).toBe(1)

      // Idempotent: the same reconcile answers the same record.
      const again = await reconcile(s, threadId, 'call_deploy', body)
      expect(again.status).toBe(200)
      expect(await again.json()).toEqual(answer)
      // A different outcome is refused and changes nothing.
      const other = await reconcile(s, threadId, 'call_deploy', { outcome: 'failed' })
      expect(other.status).toBe(409)
      expect(await errorCode(other)).toBe('EFFECT_NOT_UNKNOWN')
      expect((await s.store.getToolCall(threadKey('alice', threadId), 'call_deploy'))?.result).toBe(call?.result)
    },
  )

  it.skipIf(name === 'PostgreSQL' && !pg)(
    'typed refusals: not unknown, no such call, bad body, a stranger (a decider without an open batch too)',
    async () => {
      const s = await serve(await makeStore(), { count: 0 })
      const threadId = newThreadId()
      await deadRun(s.store, threadId)
      await touchAndSettle(s, threadId) // first touch: continues the dead run

      // call_later never started: the continuation ran it, so it is settled, not unknown.
      const notUnknown = await reconcile(s, threadId, 'call_later', { outcome: 'failed' })
      expect([notUnknown.status, await errorCode(notUnknown)]).toEqual([409, 'EFFECT_NOT_UNKNOWN'])
      const missing = await reconcile(s, threadId, 'call_nope', { outcome: 'failed' })
      expect([missing.status, await errorCode(missing)]).toEqual([422, 'UNKNOWN_TOOL_CALL'])
      for (const bad of [{}, { outcome: 'maybe' }, { outcome: 'failed', extra: 1 }, []]) {
        const res = await reconcile(s, threadId, 'call_deploy', bad)
        expect([res.status, await errorCode(res)]).toEqual([400, 'INVALID_INPUT'])
      }
      const stranger = await reconcile(s, threadId, 'call_deploy', { outcome: 'failed' }, 'bob', 'alice')
      expect([stranger.status, await errorCode(stranger)]).toEqual([404, 'THREAD_NOT_FOUND'])
      expect((await snapshotOf(s, threadId)).unsettledEffects).toHaveLength(1)

      // A decider reads a thread only while it may decide on it (docs/approvals.md): no open batch here.
      const decider = await reconcile(s, threadId, 'call_deploy', { outcome: 'failed' }, 'mgr', 'alice')
      expect([decider.status, await errorCode(decider)]).toEqual([404, 'THREAD_NOT_FOUND'])
      const owner = await reconcile(s, threadId, 'call_deploy', { outcome: 'failed' })
      expect(await owner.json()).toMatchObject({ status: 'failed', reconciledBy: 'alice' })
    },
  )
})
