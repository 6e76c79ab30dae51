/**
 * External results from the owning system (docs/protocol.md#external-results): a `resultFrom` principal posts an
 * external call's result to the owner's thread, results are deduplicated by the call's operation id, and a new user
 * message leaves a dispatched call `unknown`. Over a SQLite file and over the real PostgreSQL with two replicas
 * (own schema per test).
 */
import { afterEach, describe, expect, it as itBase } from 'vitest'
import type { ExternalResultsSettled, RunAgentInput, ThreadSnapshot } from '@interlude/protocol'
import { defineTool } from '../agent/tool.ts'
import { createPostgresStore } from '../store/postgres/postgres-store.ts'
import { newThreadId, runInput, textOf, userMessage } from '../test-utils/harness.ts'
import type { InProcessServer } from '../test-utils/in-process.ts'
import { startInProcess } from '../test-utils/in-process.ts'
import { createTestSchema, PG_URL, pgAvailable, TEST_POOLS } from '../test-utils/pg.ts'
import { commandAgent } from '../test-utils/test-agents.ts'
import { threadKey } from '../store/thread-key.ts'

const pg = await pgAvailable('external results on PostgreSQL')
const cleanups: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

const command = (value: unknown) => userMessage(JSON.stringify(value))

type Backend = 'SQLite' | 'PostgreSQL'

/**
 * `notify` is dispatched to a paging system; `eng` (the on-call system's principal) may post its result. On
 * PostgreSQL `replica` is a second server over the same schema; on SQLite it is the same server.
 */
async function serveNotify(
  backend: Backend,
): Promise<{ s: InProcessServer; replica: InProcessServer; dispatched: string[] }> {
  const dispatched: string[] = []
  const notify = defineTool({
    name: 'notify',
    description: 'Page the on-call engineer',
    parameters: { type: 'object', properties: { about: { type: 'string' } }, required: ['about'] },
    external: true,
    resultFrom: ['eng'],
    execute: (_args, ctx) => {
      dispatched.push(ctx.idempotencyKey)
    },
  })
  const agent = commandAgent([notify])
  if (backend === 'SQLite') {
    const s = await startInProcess({ agent })
    cleanups.push(() => s.dispose())
    return { s, replica: s, dispatched }
  }
  const { schema, drop } = await createTestSchema()
  cleanups.push(drop)
  // One after the other: the first creates the schema's tables.
  const serve = async () =>
    startInProcess({
      agent,
      exclusive: false,
      store: await createPostgresStore({ connectionString: PG_URL, schema, ...TEST_POOLS }),
    })
  const s = await serve()
  cleanups.push(() => s.dispose())
  const replica = await serve()
  cleanups.push(() => replica.dispose())
  return { s, replica, dispatched }
}

async function dispatch(s: InProcessServer, threadId: string): Promise<string> {
  const first = await s.postRun(
    runInput(threadId, [command({ toolCalls: [{ name: 'notify', args: { about: 'v2' } }] })]),
  )
  const finished = first.events.at(-1) as { outcome: { pendingToolCallIds: string[] } }
  expect(finished.outcome.pendingToolCallIds).toHaveLength(1)
  return finished.outcome.pendingToolCallIds[0]!
}

const result = (threadId: string, toolCallId: string, content: string, id: string): RunAgentInput =>
  runInput(threadId, [{ id, role: 'tool', toolCallId, content }])

async function snapshot(s: InProcessServer, threadId: string): Promise<ThreadSnapshot> {
  return (await (await s.request(`/threads/${threadId}`)).json()) as ThreadSnapshot
}

describe.each(['SQLite', 'PostgreSQL'] as const)('external results from the owning system (%s)', (backend) => {
  const it = backend === 'PostgreSQL' && !pg ? itBase.skip : itBase
  it('the resultFrom principal posts the result with ?owner=; the turn continues as the owner’s', async () => {
    const { s, dispatched } = await serveNotify(backend)
    const threadId = newThreadId()
    const toolCallId = await dispatch(s, threadId)
    expect(dispatched).toEqual([toolCallId])
    expect((await snapshot(s, threadId)).awaitingExternal).toEqual([
      { toolCallId, toolName: 'notify', resultFrom: ['eng'] },
    ])

    const posted = await s.postRun(result(threadId, toolCallId, '{"paged":"ana"}', 'r1'), {
      principal: 'eng',
      owner: 'alice',
    })
    expect(posted.status).toBe(200)
    expect(textOf(posted.events)).toBe('done: {"paged":"ana"}')
    const after = await snapshot(s, threadId)
    expect(after.awaitingExternal).toBeUndefined()
    expect(after.status).toBe('idle')
    const call = await s.store.getToolCall(threadKey('alice', threadId), toolCallId)
    expect(call).toMatchObject({ status: 'succeeded', result: '{"paged":"ana"}' })
  })

  it('a duplicate gets the first result back (200) and settles nothing twice; concurrent posts settle once', async () => {
    const { s, replica } = await serveNotify(backend)
    const threadId = newThreadId()
    const toolCallId = await dispatch(s, threadId)
    const key = threadKey('alice', threadId)
    const before = (await s.store.getThread(key))!.revision

    // Five results at once, from the system and the owner: one continues the turn, the others get its result.
    const posts = await Promise.all(
      [0, 1, 2, 3, 4].map((i) =>
        (i < 2 ? replica : s).request('/runs', {
          method: 'POST',
          principal: i % 2 === 0 ? 'eng' : 'alice',
          ...(i % 2 === 0 ? { owner: 'alice' } : {}),
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify(result(threadId, toolCallId, `{"paged":"p${i}"}`, `r${i}`)),
        }),
      ),
    )
    expect(posts.map((p) => p.status)).toEqual([200, 200, 200, 200, 200])
    const streams = posts.filter((p) => p.headers.get('content-type')?.startsWith('text/event-stream'))
    expect(streams).toHaveLength(1)
    await streams[0]!.text()
    const call = await s.store.getToolCall(key, toolCallId)
    expect(call?.status).toBe('succeeded')
    const answers = await Promise.all(
      posts.filter((p) => !streams.includes(p)).map((p) => p.json() as Promise<ExternalResultsSettled>),
    )
    for (const answer of answers)
      expect(answer).toEqual({ threadId, settled: [{ toolCallId, status: 'succeeded', content: call!.result }] })

    // Later, the same result again (same message id) and another one: still the first, and still one run.
    const again = await s.request('/runs', {
      method: 'POST',
      principal: 'eng',
      owner: 'alice',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(result(threadId, toolCallId, '{"paged":"late"}', 'r-late')),
    })
    expect(again.status).toBe(200)
    expect(await again.json()).toEqual({
      threadId,
      settled: [{ toolCallId, status: 'succeeded', content: call!.result }],
    })
    const toolMessages = (await s.store.listMessages(key)).filter((m) => m.role === 'tool')
    expect(toolMessages).toHaveLength(1)
    const runs = (await s.store.listMessages(key)).filter(
      (m) => m.role === 'assistant' && m.content?.startsWith('done'),
    )
    expect(runs).toHaveLength(1)
    // The dispatch run, then one continuation: two admitted input runs' worth of revisions, no more.
    const thread = (await s.store.getThread(key))!
    expect(thread.revision).toBeGreaterThan(before)
    const revision = thread.revision
    await s.request('/runs', {
      method: 'POST',
      principal: 'eng',
      owner: 'alice',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(result(threadId, toolCallId, '{"paged":"later"}', 'r-later')),
    })
    expect((await s.store.getThread(key))!.revision).toBe(revision)
  })

  it('a third principal, or the system sending anything but results, gets 404 and changes nothing', async () => {
    const { s } = await serveNotify(backend)
    const threadId = newThreadId()
    const toolCallId = await dispatch(s, threadId)
    const key = threadKey('alice', threadId)
    const revision = (await s.store.getThread(key))!.revision

    const stranger = await s.postRun(result(threadId, toolCallId, 'x', 'b1'), { principal: 'bob', owner: 'alice' })
    expect(stranger.status).toBe(404)
    expect(stranger.error?.code).toBe('THREAD_NOT_FOUND')
    const talk = await s.postRun(runInput(threadId, [userMessage('hi')]), { principal: 'eng', owner: 'alice' })
    expect(talk.status).toBe(404)
    const mixed = await s.postRun(
      runInput(threadId, [userMessage('hi'), { id: 'm2', role: 'tool', toolCallId, content: 'x' }]),
      {
        principal: 'eng',
        owner: 'alice',
      },
    )
    expect(mixed.status).toBe(404)
    const nowhere = await s.postRun(result(newThreadId(), toolCallId, 'x', 'e1'), { principal: 'eng', owner: 'alice' })
    expect(nowhere.status).toBe(404)
    // Its own thread of that id is a different (missing) thread: nothing to answer there either.
    const own = await s.postRun(result(threadId, toolCallId, 'x', 'e2'), { principal: 'eng' })
    expect(own.status).toBe(422)
    expect((await s.store.getThread(key))!.revision).toBe(revision)
    expect((await s.store.getToolCall(key, toolCallId))?.status).toBe('awaiting_result')
  })

  it('a new user message leaves the dispatched call unknown, not cancelled; a late result changes nothing', async () => {
    const { s } = await serveNotify(backend)
    const threadId = newThreadId()
    const toolCallId = await dispatch(s, threadId)
    const key = threadKey('alice', threadId)

    const next = await s.postRun(runInput(threadId, [userMessage('anything new?')]))
    expect(next.status).toBe(200)
    const call = await s.store.getToolCall(key, toolCallId)
    expect(call?.status).toBe('unknown')
    expect(JSON.parse(call!.result!)).toMatchObject({ status: 'unknown' })
    expect(call!.result).toContain('may have happened')
    const snap = await snapshot(s, threadId)
    expect(snap.awaitingExternal).toBeUndefined()
    expect(snap.unsettledEffects).toEqual([{ toolCallId, toolName: 'notify', status: 'unknown' }])
    const closing = snap.messages.find((m) => m.role === 'tool' && m.toolCallId === toolCallId)
    expect(String(closing?.content)).not.toContain('cancelled')

    const late = await s.request('/runs', {
      method: 'POST',
      principal: 'eng',
      owner: 'alice',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(result(threadId, toolCallId, '{"paged":"ana"}', 'late')),
    })
    expect(late.status).toBe(200)
    expect(((await late.json()) as ExternalResultsSettled).settled[0]).toMatchObject({ toolCallId, status: 'unknown' })
    expect((await s.store.getToolCall(key, toolCallId))?.status).toBe('unknown')
  })
})

describe('resultFrom', () => {
  itBase('is refused without external and when empty', async () => {
    const base = { name: 'x', description: 'x', parameters: { type: 'object' } } as const
    await expect(
      startInProcess({ agent: commandAgent([defineTool({ ...base, resultFrom: ['eng'], execute: () => 1 })]) }),
    ).rejects.toThrow(/resultFrom needs external/)
    await expect(
      startInProcess({ agent: commandAgent([defineTool({ ...base, external: true, resultFrom: [] })]) }),
    ).rejects.toThrow(/resultFrom is empty/)
  })
})
