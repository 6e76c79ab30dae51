import { afterEach, describe, expect, it } from 'vitest'
import { EventType } from '@interlude/protocol'
import type { ThreadListPage, ThreadSnapshot } from '@interlude/protocol'
import { ThreadSnapshotSchema } from '@interlude/protocol/schemas'
import type { AgentDefinition } from '../agent/agent.ts'
import { releaseAssistant } from '../demo/release-assistant.ts'
import { interruptsOf, newThreadId, runInput, types, userMessage } from '../test-utils/harness.ts'
import type { InProcessOptions, InProcessServer } from '../test-utils/in-process.ts'
import { startInProcess } from '../test-utils/in-process.ts'
import { gatedModel } from '../test-utils/test-agents.ts'

let server: InProcessServer | undefined
afterEach(async () => {
  await server?.dispose()
  server = undefined
})

async function serve(agent: AgentDefinition = releaseAssistant(), extra: InProcessOptions = {}) {
  server = await startInProcess({ agent, ...extra })
  return server
}

const get = (
  s: InProcessServer,
  path: string,
  principal: 'alice' | 'bob' = 'alice',
  headers: Record<string, string> = {},
) => s.request(path, { principal, headers })

describe('GET {base}/threads/:threadId (snapshot)', () => {
  it('returns the owner a valid snapshot with the pending batch, and hides it from others', async () => {
    const clock = { now: Date.parse('2031-05-01T10:00:00Z') }
    // No periodic sweep: the expired batch stays pending (hidden, not yet decided) for the last assertions.
    const s = await serve(releaseAssistant(), { now: () => clock.now, interruptTtlSeconds: 60, expirySweepMs: 0 })
    const threadId = newThreadId()
    const paused = await s.postRun(runInput(threadId, [userMessage('deploy v2 to production')]))
    const res = await get(s, `/threads/${threadId}`)
    expect(res.status).toBe(200)
    const snapshot = ThreadSnapshotSchema.parse(await res.json()) as ThreadSnapshot
    expect(snapshot).toMatchObject({ threadId, status: 'interrupted', state: { releases: [], deployments: [] } })
    expect(snapshot.interrupts).toEqual(interruptsOf(paused.events))
    expect(snapshot.lastEventId).toBe(Number(paused.ids[paused.ids.length - 1]))
    expect(snapshot.messages.map((m) => m.role)).toEqual(['user', 'assistant'])
    expect(snapshot.activeRunId).toBeUndefined()
    expect(snapshot.unsettledEffects).toBeUndefined()

    expect((await get(s, `/threads/${threadId}`, 'bob')).status).toBe(404)
    clock.now += 60_000
    const expired = (await (await get(s, `/threads/${threadId}`)).json()) as ThreadSnapshot
    expect(expired.interrupts).toBeUndefined()
    expect(expired.status).toBe('interrupted')
  })
})

describe('GET {base}/threads/:threadId/events (replay)', () => {
  it('replays identical frames from the log, after Last-Event-ID or ?after=', async () => {
    const s = await serve()
    const threadId = newThreadId()
    const first = await s.postRun(runInput(threadId, [userMessage('hello')]))
    const second = await s.postRun(runInput(threadId, [userMessage('deploy v1')]))
    const all = first.raw + second.raw
    const replay = await get(s, `/threads/${threadId}/events`)
    expect(replay.headers.get('content-type')).toMatch(/^text\/event-stream/)
    expect(await replay.text()).toBe(all)
    const cut = first.ids[first.ids.length - 1]!
    expect(await (await get(s, `/threads/${threadId}/events`, 'alice', { 'Last-Event-ID': cut })).text()).toBe(
      second.raw,
    )
    expect(await (await get(s, `/threads/${threadId}/events?after=${cut}`)).text()).toBe(second.raw)
    expect((await get(s, `/threads/${threadId}/events`, 'alice', { 'Last-Event-ID': 'abc' })).status).toBe(400)
    expect((await get(s, `/threads/${threadId}/events`, 'bob')).status).toBe(404)
  })

  it('tails the active run live until its terminal event, with heartbeats while idle', async () => {
    const gate = gatedModel()
    const s = await serve({ model: gate.model }, { heartbeatMs: 30 })
    const threadId = newThreadId()
    const run = s.postRun(runInput(threadId, [userMessage('hi')]))
    await gate.started
    const tail = await get(s, `/threads/${threadId}/events`)
    const reader = tail.body!.getReader()
    let text = ''
    while (!text.includes(': ping')) text += new TextDecoder().decode((await reader.read()).value)
    gate.release()
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      text += new TextDecoder().decode(value)
    }
    const frames = text.split('\n\n').filter((f) => f.startsWith('id: '))
    expect(frames.map((f) => (JSON.parse(f.split('data: ')[1]!) as { type: string }).type)).toEqual(
      types((await run).events),
    )
  })
})

describe('POST {base}/threads/:threadId/runs/:runId/cancel', () => {
  it('stops a running run with outcome cancelled; the thread becomes idle', async () => {
    const gate = gatedModel()
    const s = await serve({ model: gate.model })
    const threadId = newThreadId()
    const input = runInput(threadId, [userMessage('hi')])
    const running = s.postRun(input)
    await gate.started
    const cancel = (
      headers: Record<string, string> = { 'Content-Type': 'application/json' },
      runId = input.runId,
      principal: 'alice' | 'bob' = 'alice',
    ) => s.request(`/threads/${threadId}/runs/${runId}/cancel`, { method: 'POST', principal, headers, body: '{}' })
    expect((await cancel({ 'Content-Type': 'text/plain' })).status).toBe(400)
    expect((await cancel(undefined, input.runId, 'bob')).status).toBe(404)
    expect((await cancel(undefined, 'nope')).status).toBe(404)
    const res = await cancel()
    expect(res.status).toBe(202)
    gate.release()
    const events = (await running).events
    expect(events[events.length - 1]).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: 'cancelled' } })
    expect(await (await cancel()).json()).toEqual({ runId: input.runId, status: 'cancelled' })
    const snapshot = (await (await get(s, `/threads/${threadId}`)).json()) as ThreadSnapshot
    expect(snapshot.status).toBe('idle')
  })
})

describe('GET {base}/threads?status=interrupted (inbox)', () => {
  it("lists the caller's interrupted threads with their interrupts, paginated", async () => {
    const s = await serve()
    const a = newThreadId()
    const b = newThreadId()
    await s.postRun(runInput(a, [userMessage('deploy v1')]))
    await s.postRun(runInput(newThreadId(), [userMessage('hello')]))
    await s.postRun(runInput(b, [userMessage('ask me to choose')]))
    await s.postRun(runInput(newThreadId(), [userMessage('deploy v9')]), { principal: 'bob' })
    const page = (await (await get(s, '/threads?status=interrupted')).json()) as ThreadListPage
    expect(page.threads.map((t) => t.threadId).sort()).toEqual([a, b].sort())
    expect(page.threads.every((t) => t.status === 'interrupted' && (t.interrupts?.length ?? 0) > 0)).toBe(true)
    expect(page.threads.find((t) => t.threadId === a)?.title).toBe('deploy v1')
    expect(page.nextCursor).toBeUndefined()
    const first = (await (await get(s, '/threads?status=interrupted&limit=1')).json()) as ThreadListPage
    expect(first.threads).toHaveLength(1)
    const rest = (await (
      await get(s, `/threads?status=interrupted&limit=1&cursor=${first.nextCursor}`)
    ).json()) as ThreadListPage
    expect([...first.threads, ...rest.threads].map((t) => t.threadId).sort()).toEqual([a, b].sort())
    expect((await (await get(s, '/threads')).json()).threads).toHaveLength(3)
    expect((await get(s, '/threads?status=done')).status).toBe(400)
    expect((await get(s, '/threads?cursor=zzz')).status).toBe(400)
  })
})
