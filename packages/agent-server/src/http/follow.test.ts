import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { DECISION_EVENT_NAME, EventType } from '@interlude/protocol'
import type { Interrupt } from '@interlude/protocol'
import { releaseAssistant } from '../demo/release-assistant.ts'
import { postDecision } from '../test-utils/decisions.ts'
import { interruptsOf, newThreadId, resumeInput, runInput, userMessage } from '../test-utils/harness.ts'
import type { InProcessServer } from '../test-utils/in-process.ts'
import { serversPerTest } from '../test-utils/in-process.ts'
import { resolved } from '../test-utils/resume-entries.ts'
import type { SseTail, TailFrame } from '../test-utils/sse-tail.ts'
import { tailSse } from '../test-utils/sse-tail.ts'

/** The decider on eng's threads (threads are per owner: `?owner=`, docs/protocol.md#thread-ids). */
const MGR = { principal: 'mgr', owner: 'eng' } as const

/**
 * `GET …/events?follow=1` (docs/approvals.md): the replay, then the thread's every later run on one open stream,
 * for the owner and for a decider; pings while idle; it ends when the client leaves or the server closes.
 */
const server = serversPerTest({ approvers: ['mgr'], heartbeatMs: 30 })

async function pausedDeploy(s: InProcessServer): Promise<{ threadId: string; interrupts: Interrupt[] }> {
  const threadId = newThreadId()
  const first = await s.postRun(runInput(threadId, [userMessage('deploy v8 to staging')]), { principal: 'eng' })
  return { threadId, interrupts: interruptsOf(first.events) }
}

const finishedRuns = (tail: SseTail) =>
  tail.frames.filter((f) => f.event.type === EventType.RUN_FINISHED || f.event.type === EventType.RUN_ERROR).length
const runIdOf = (frame: TailFrame | undefined) => (frame?.event as { runId?: string } | undefined)?.runId

/** Every id is the previous + 1: nothing skipped, nothing twice. */
function expectContiguous(frames: readonly TailFrame[], from: number): void {
  expect(frames.map((f) => f.id)).toEqual(frames.map((_, i) => from + i))
}

describe('GET {base}/threads/:threadId/events?follow=1', () => {
  it("a decider follows the paused thread: the decision's run, pings while idle, then the owner's next run", async () => {
    const s = await server()
    const { threadId, interrupts } = await pausedDeploy(s)
    const tail = tailSse(await s.request(`/threads/${threadId}/events?follow=1`, { principal: 'mgr', owner: 'eng' }))
    await tail.waitFor((t) => finishedRuns(t) === 1, 'the replay of the paused run')

    const runId = `run_${randomUUID()}`
    const resume = interrupts.map((i) => resolved(i))
    expect((await postDecision(s, threadId, { runId, resume }, MGR)).status).toBe(202)
    await tail.waitFor((t) => finishedRuns(t) === 2, 'the resumed run to finish')
    const resumedStart = tail.frames.findIndex((f) => f.event.type === EventType.RUN_STARTED && runIdOf(f) === runId)
    expect(tail.frames[resumedStart + 1]?.event).toMatchObject({
      type: EventType.CUSTOM,
      name: DECISION_EVENT_NAME,
      value: { decidedBy: 'mgr', via: 'api', runId },
    })

    // Still open while idle: pings, not an end.
    const pings = tail.pings()
    await tail.waitFor((t) => t.pings() > pings, 'a ping while idle')
    expect(tail.ended()).toBe(false)

    const next = runInput(threadId, [userMessage('hello')])
    expect((await s.postRun(next, { principal: 'eng' })).status).toBe(200)
    await tail.waitFor((t) => finishedRuns(t) === 3, 'the next run')
    expect(runIdOf(tail.frames.findLast((f) => f.event.type === EventType.RUN_STARTED))).toBe(next.runId)
    expectContiguous(tail.frames, 1)
    // Byte for byte the log: the same events a replay returns.
    const replay = await s.threadEvents(threadId, { principal: 'eng' })
    expect(tail.frames.map((f) => f.event)).toEqual(replay.events)
    await tail.cancel()
  })

  it('replays after the cursor (Last-Event-ID or ?after=) and ends when the server closes', async () => {
    const s = await server()
    const { threadId } = await pausedDeploy(s)
    const all = (await s.threadEvents(threadId, { principal: 'eng' })).events.length
    const byHeader = tailSse(
      await s.request(`/threads/${threadId}/events?follow=true`, {
        principal: 'eng',
        headers: { 'Last-Event-ID': '3' },
      }),
    )
    const byQuery = tailSse(await s.request(`/threads/${threadId}/events?after=5&follow=1`, { principal: 'eng' }))
    await byHeader.waitFor((t) => t.frames.length === all - 3, 'the replay after 3')
    await byQuery.waitFor((t) => t.frames.length === all - 5, 'the replay after 5')
    expectContiguous(byHeader.frames, 4)
    expectContiguous(byQuery.frames, 6)
    await s.close()
    await byHeader.waitFor((t) => t.ended(), 'the stream to end at close')
    await byQuery.waitFor((t) => t.ended(), 'the stream to end at close')
  })

  it('without follow the replay ends as before; a follower that loses its right stops at the next run', async () => {
    const base = releaseAssistant()
    const s = await server({
      agent: base,
      // mgr may decide anything but a deploy to production.
      canDecide: async (principal, ctx) => {
        const args = (ctx.interrupt.metadata as { arguments?: { environment?: string } } | undefined)?.arguments
        return principal === ctx.owner || (principal === 'mgr' && args?.environment !== 'production')
      },
    })
    const { threadId, interrupts } = await pausedDeploy(s)
    const plain = await s.threadEvents(threadId, { principal: 'mgr', owner: 'eng' })
    expect(plain.events[plain.events.length - 1]).toMatchObject({ type: EventType.RUN_FINISHED })

    const tail = tailSse(await s.request(`/threads/${threadId}/events?follow=1`, { principal: 'mgr', owner: 'eng' }))
    await tail.waitFor((t) => finishedRuns(t) === 1, 'the replay')
    const resume = interrupts.map((i) => resolved(i))
    expect((await s.postRun(resumeInput(threadId, resume), { principal: 'eng' })).status).toBe(200)
    await tail.waitFor((t) => finishedRuns(t) === 2, 'the resumed run')
    // A new batch mgr may not decide, then its resume: mgr's right ends with the run that decides it.
    const second = await s.postRun(runInput(threadId, [userMessage('deploy v9 to production')]), { principal: 'eng' })
    await tail.waitFor((t) => finishedRuns(t) === 3, 'the third run')
    const entries = interruptsOf(second.events).map((i) => resolved(i))
    const last = resumeInput(threadId, entries)
    expect((await s.postRun(last, { principal: 'eng' })).status).toBe(200)
    await tail.waitFor((t) => t.ended(), 'the follower to be ended')
    expect(tail.frames.some((f) => runIdOf(f) === last.runId)).toBe(false)
    expect((await s.request(`/threads/${threadId}/events`, { principal: 'mgr', owner: 'eng' })).status).toBe(404)
  })
})
