import { afterAll, describe, expect, it } from 'vitest'
import type { ToolDefinition } from '../../agent/tool.ts'
import { interruptsOf, newThreadId, resumeInput, runInput, userMessage } from '../../test-utils/harness.ts'
import { serversPerTest } from '../../test-utils/in-process.ts'
import type { InProcessServer } from '../../test-utils/in-process.ts'
import { commandAgent } from '../../test-utils/test-agents.ts'
import { threadKey } from '../../store/thread-key.ts'
import { createPostgresStore } from '../../store/postgres/postgres-store.ts'
import type { Store } from '../../store/store.ts'
import { createTestSchema, PG_URL, pgAvailable, TEST_POOLS } from '../../test-utils/pg.ts'

/**
 * Thread access (docs/protocol.md#thread-ids): another principal's thread is indistinguishable from one that does
 * not exist in every answer, and naming it never creates, changes or reveals anything.
 */

const deploy: ToolDefinition = {
  name: 'deploy',
  description: 'deploy',
  parameters: { type: 'object' },
  approval: 'always',
  execute: () => ({ deployed: true }),
}
const server = serversPerTest({ agent: commandAgent([deploy]) })

/** Every thread route as `bob`, answered as status + body; with `owner`, naming that principal's thread. */
async function probe(s: InProcessServer, threadId: string, interruptId: string, owner?: string): Promise<string[]> {
  const json = { 'Content-Type': 'application/json' }
  const as = { principal: 'bob' as const, ...(owner !== undefined ? { owner } : {}) }
  const answers: Response[] = [
    await s.request(`/threads/${threadId}`, as),
    await s.request(`/threads/${threadId}/events`, as),
    await s.request(`/threads/${threadId}/events?follow=1`, as),
    await s.request(`/threads/${threadId}/runs/run_1`, as),
    await s.request(`/threads/${threadId}/runs/run_1/cancel`, { ...as, method: 'POST', headers: json, body: '{}' }),
    await s.request(`/threads/${threadId}/effects/call_1/reconcile`, {
      ...as,
      method: 'POST',
      headers: json,
      body: JSON.stringify({ outcome: 'failed' }),
    }),
    await s.request(`/threads/${threadId}/decisions`, {
      ...as,
      method: 'POST',
      headers: json,
      body: JSON.stringify({
        runId: 'run_d',
        resume: [{ interruptId, status: 'resolved', payload: { approved: true } }],
      }),
    }),
    await s.request('/runs', {
      ...as,
      method: 'POST',
      headers: json,
      body: JSON.stringify(resumeInput(threadId, [{ interruptId, status: 'cancelled' }], { runId: 'run_r' })),
    }),
    await s.request('/runs', {
      ...as,
      method: 'POST',
      headers: json,
      body: JSON.stringify(runInput(threadId, [userMessage('hi')], { runId: 'run_i' })),
    }),
  ]
  return Promise.all(answers.map(async (r) => `${r.status} ${await r.text()}`))
}

const pausingInput = (threadId: string) =>
  runInput(threadId, [userMessage(JSON.stringify({ toolCalls: [{ name: 'deploy', args: {} }] }))])

describe("another principal's thread", () => {
  it('is answered exactly like a thread that does not exist, on every route, also when its owner is named', async () => {
    const s = await server()
    const threadId = newThreadId()
    const paused = await s.postRun(pausingInput(threadId))
    const [interrupt] = interruptsOf(paused.events)
    const before = await s.store.getThread(threadKey('alice', threadId))
    const taken = await probe(s, threadId, interrupt!.id, 'alice')
    const unknown = await probe(s, newThreadId(), interrupt!.id, 'alice')
    expect(taken).toEqual(unknown)
    for (const answer of taken) expect(answer).toMatch(/^404 \{"error":\{"code":"THREAD_NOT_FOUND"/)
    expect(await s.store.getThread(threadKey('alice', threadId))).toEqual(before)
    // Neither list shows it.
    const threads = (await (await s.request('/threads', { principal: 'bob' })).json()) as { threads: unknown[] }
    expect(threads.threads).toEqual([])
  })

  it('is not touched by input naming its id: that input is a thread of the caller’s own (docs/decisions.md#threads-keyed-per-owner)', async () => {
    const s = await server()
    const threadId = newThreadId()
    const first = await s.postRun(runInput(threadId, [userMessage('{"text":"mine"}')]))
    expect(first.status).toBe(200)
    const before = await s.store.getThread(threadKey('alice', threadId))
    const other = await s.postRun(runInput(threadId, [userMessage('{"text":"now mine"}')]), { principal: 'bob' })
    expect(other.status).toBe(200)
    expect(other.events[0]).toMatchObject({ type: 'RUN_STARTED', threadId })
    const after = await s.store.getThread(threadKey('alice', threadId))
    expect(after).toEqual(before)
    expect(after?.ownerId).toBe('alice')
    expect(await s.store.listMessages(threadKey('alice', threadId))).toHaveLength(2)
    expect((await s.store.getThread(threadKey('bob', threadId)))?.ownerId).toBe('bob')
    // The owner keeps using it.
    expect((await s.postRun(runInput(threadId, [userMessage('{"text":"again"}')]))).status).toBe(200)
  })
})

type Snapshot = { threadId: string; status: string; messages: { content?: unknown }[]; interrupts?: { id: string }[] }

const pg = await pgAvailable('thread ids per owner on PostgreSQL')
const drops: (() => Promise<void>)[] = []
afterAll(async () => {
  for (const drop of drops.splice(0)) await drop()
})
const backends: [string, () => Promise<Store | undefined>][] = [
  ['SQLite', async () => undefined],
  ...(pg
    ? [
        [
          'PostgreSQL',
          async () => {
            const { schema, drop } = await createTestSchema()
            drops.push(drop)
            return createPostgresStore({ connectionString: PG_URL, schema, ...TEST_POOLS })
          },
        ] as [string, () => Promise<Store | undefined>],
      ]
    : []),
]

describe.each(backends)(
  'thread ids per owner (docs/decisions.md#threads-keyed-per-owner, %s): a used or guessed id cannot be squatted',
  (_, store) => {
    it('bob takes "support" first; alice’s run on "support" works, and the two threads stay apart everywhere', async () => {
      const given = await store()
      const s = await server(given ? { store: given } : {})
      const threadId = `support-${newThreadId()}`
      // Bob takes the id first and leaves his thread paused.
      const bobs = await s.postRun(pausingInput(threadId), { principal: 'bob' })
      const [bobInterrupt] = interruptsOf(bobs.events)
      expect(bobInterrupt).toBeDefined()

      // Alice's run on the same id: admitted, her own thread (this was THREAD_NOT_FOUND forever).
      const alices = await s.postRun(runInput(threadId, [userMessage('{"text":"hello"}')]))
      expect(alices.status).toBe(200)
      expect(alices.events[0]).toMatchObject({ type: 'RUN_STARTED', threadId })
      expect(alices.events[alices.events.length - 1]).toMatchObject({ type: 'RUN_FINISHED', threadId })

      const snapshot = async (principal: 'alice' | 'bob') =>
        (await (await s.request(`/threads/${threadId}`, { principal })).json()) as Snapshot
      const [a, b] = [await snapshot('alice'), await snapshot('bob')]
      expect(a).toMatchObject({ threadId, status: 'idle' })
      expect(a.interrupts).toBeUndefined()
      expect(b).toMatchObject({ threadId, status: 'interrupted', interrupts: [{ id: bobInterrupt!.id }] })
      expect(a.messages.map((m) => m.content)).toContain('{"text":"hello"}')
      expect(b.messages.map((m) => m.content)).not.toContain('{"text":"hello"}')

      // Each replay is its owner's log only (Last-Event-ID included), and names the client's id.
      const aliceLog = await s.threadEvents(threadId)
      const bobLog = await s.threadEvents(threadId, { principal: 'bob' })
      expect(aliceLog.events.filter((e) => e.type === 'RUN_STARTED')).toHaveLength(1)
      expect(bobLog.events.some((e) => e.type === 'RUN_FINISHED' && 'outcome' in e)).toBe(true)
      for (const e of [...aliceLog.events, ...bobLog.events]) if ('threadId' in e) expect(e.threadId).toBe(threadId)
      const tail = await s.threadEvents(threadId, { principal: 'bob', headers: { 'Last-Event-ID': '1' } })
      expect(tail.events).toEqual(bobLog.events.slice(1))

      // Each lists its own; alice's new input while bob's thread is paused is not INTERRUPTS_PENDING.
      for (const principal of ['alice', 'bob'] as const) {
        const list = (await (await s.request('/threads', { principal })).json()) as { threads: Snapshot[] }
        expect(list.threads.map((t) => t.threadId)).toEqual([threadId])
      }
      expect((await s.postRun(runInput(threadId, [userMessage('{"text":"more"}')]))).status).toBe(200)

      // Bob resumes his own batch; alice's thread does not move.
      const aliceBefore = await s.store.getThread(threadKey('alice', threadId))
      const resumed = await s.postRun(
        resumeInput(threadId, [{ interruptId: bobInterrupt!.id, status: 'resolved', payload: { approved: true } }]),
        { principal: 'bob' },
      )
      expect(resumed.status).toBe(200)
      expect(await s.store.getThread(threadKey('alice', threadId))).toEqual(aliceBefore)
      expect((await snapshot('bob')).status).toBe('idle')

      // A cancel names the caller's own run: bob cancelling alice's run id reaches nothing of hers.
      const aliceRun = (alices.events[0] as { runId: string }).runId
      const cancel = await s.request(`/threads/${threadId}/runs/${aliceRun}/cancel`, {
        principal: 'bob',
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: '{}',
      })
      expect(cancel.status).toBe(404)
    })
  },
)
