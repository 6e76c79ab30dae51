import { describe, expect, it } from 'vitest'
import type { Interrupt } from '@interlude/protocol'
import type { ReleaseState } from '../demo/release-assistant.ts'
import { countingDemo, parentBytes, postFork, serverPerTest, snapshotOf, stateOf } from '../test-utils/fork-kit.ts'
import { interruptsOf, newThreadId, resumeInput, runInput, userMessage } from '../test-utils/harness.ts'
import type { InProcessServer } from '../test-utils/in-process.ts'
import { resolved } from '../test-utils/resume-entries.ts'
import { storeBackends } from '../test-utils/store-backends.ts'
import { threadKey } from '../store/thread-key.ts'

/**
 * Forks through questions asked from inside a tool (`ctx.interrupt`, the demo's rollback) and through a subagent's
 * approval (the demo's auditor), on SQLite and PostgreSQL (docs/time-travel.md#forks-at-a-batch): the fork pauses at
 * the same question with the answers and memoised steps of the pause, and its answer is carried out in the fork only.
 */

const backends = await storeBackends('forks through asks on PostgreSQL')

/** One step of a conversation: the run's id (its batch's id) and what it asked. */
interface Asked {
  readonly batchId: string
  readonly asked: Interrupt[]
}

describe.each(backends)('forks through asks on %s', (_name, start) => {
  const serve = serverPerTest(start)
  const step = async (s: InProcessServer, run: Promise<{ status: number; events: unknown[] }>): Promise<Asked> => {
    const answer = await run
    expect(answer.status).toBe(200)
    const events = answer.events as Parameters<typeof interruptsOf>[0]
    return { batchId: (events[0] as { runId: string }).runId, asked: interruptsOf(events) }
  }
  const rollbacksOf = async (s: InProcessServer, threadId: string) => stateOf((await snapshotOf(s, threadId)).body)

  it('ctx.interrupt: a fork at the second question keeps the first answer and the memoised snapshot', async () => {
    const demo = countingDemo()
    const s = await serve(demo.agent)
    const threadId = newThreadId()
    const first = await step(s, s.postRun(runInput(threadId, [userMessage('roll back v2.1 carefully')])))
    expect(first.asked.map((i) => i.message)).toEqual([expect.stringMatching(/^Roll back v2\.1\?/)])
    const second = await step(s, s.postRun(resumeInput(threadId, [resolved(first.asked[0]!, { confirm: true })])))
    expect(second.asked.map((i) => i.message)).toEqual([expect.stringMatching(/^Really roll back v2\.1\?/)])
    const done = await step(s, s.postRun(resumeInput(threadId, [resolved(second.asked[0]!, { confirm: true })])))
    expect(done.asked).toEqual([])
    const parentState: ReleaseState = await rollbacksOf(s, threadId)
    expect(parentState.rollbacks).toHaveLength(1)
    expect(parentState.snapshots).toHaveLength(1)
    const before = await parentBytes(s, threadId)
    const calls = demo.modelCalls.length

    // At the second question: paused there again, the first answer kept (no first question asked again).
    const fork = await postFork(s, threadId, { at: { batchId: second.batchId } })
    expect(fork.status).toBe(201)
    const { body: paused } = await snapshotOf(s, fork.body.threadId)
    expect(paused.interrupts?.map((i) => i.message)).toEqual(second.asked.map((i) => i.message))
    expect(paused.interrupts?.[0]?.id).not.toBe(second.asked[0]!.id)
    expect(stateOf(paused).snapshots).toEqual(parentState.snapshots)
    expect(stateOf(paused).rollbacks ?? []).toEqual([])
    const no = await step(
      s,
      s.postRun(resumeInput(fork.body.threadId, [resolved(paused.interrupts![0]!, { confirm: false })])),
    )
    expect(no.asked).toEqual([])
    const forkState = await rollbacksOf(s, fork.body.threadId)
    expect(forkState.rollbacks ?? []).toEqual([])
    // The memoised step did not run again: the same one snapshot.
    expect(forkState.snapshots).toEqual(parentState.snapshots)
    expect(demo.modelCalls).toHaveLength(calls + 1)

    // At the first question: asked again with a new id; "no" there rolls back nothing either.
    const early = await postFork(s, threadId, { at: { batchId: first.batchId } })
    const { body: atFirst } = await snapshotOf(s, early.body.threadId)
    expect(atFirst.interrupts?.map((i) => i.message)).toEqual(first.asked.map((i) => i.message))
    await step(s, s.postRun(resumeInput(early.body.threadId, [resolved(atFirst.interrupts![0]!, { confirm: false })])))
    expect((await rollbacksOf(s, early.body.threadId)).rollbacks ?? []).toEqual([])

    expect(await parentBytes(s, threadId)).toEqual(before)
    expect((await rollbacksOf(s, threadId)).rollbacks).toHaveLength(1)
  })

  it("a subagent's approval: the fork pauses at the sign-off; denied there, approved in another fork", async () => {
    const demo = countingDemo()
    const s = await serve(demo.agent)
    const threadId = newThreadId()
    const audit = await step(s, s.postRun(runInput(threadId, [userMessage('audit v2.1')])))
    expect(audit.asked).toHaveLength(1)
    expect(audit.asked[0]).toMatchObject({ message: 'Sign off the audit of v2.1?' })
    expect(audit.asked[0]!.subagentRunId).toBeDefined()
    await step(s, s.postRun(resumeInput(threadId, [resolved(audit.asked[0]!)])))
    expect((await rollbacksOf(s, threadId)).audits).toHaveLength(1)
    const before = await parentBytes(s, threadId)

    const denied = await postFork(s, threadId, { at: { batchId: audit.batchId } })
    expect(denied.status).toBe(201)
    const { body: paused } = await snapshotOf(s, denied.body.threadId)
    const question = paused.interrupts![0]!
    expect(question).toMatchObject({ message: 'Sign off the audit of v2.1?', reason: audit.asked[0]!.reason })
    expect(question.id).not.toBe(audit.asked[0]!.id)
    // The subagent's run is named after the fork's own call.
    expect(question.subagentRunId).not.toBe(audit.asked[0]!.subagentRunId)
    await step(s, s.postRun(resumeInput(denied.body.threadId, [resolved(question, { approved: false })])))
    expect((await rollbacksOf(s, denied.body.threadId)).audits ?? []).toEqual([])

    const approved = await postFork(s, threadId, { at: { batchId: audit.batchId } })
    const again = (await snapshotOf(s, approved.body.threadId)).body.interrupts![0]!
    await step(s, s.postRun(resumeInput(approved.body.threadId, [resolved(again)])))
    expect((await rollbacksOf(s, approved.body.threadId)).audits).toHaveLength(1)

    expect(await parentBytes(s, threadId)).toEqual(before)
    expect((await rollbacksOf(s, threadId)).audits).toHaveLength(1)
  })

  it('an external call awaiting its result is settled cancelled in the fork; its result goes to the parent only', async () => {
    const s = await serve()
    const threadId = newThreadId()
    const paged = await s.postRun(runInput(threadId, [userMessage('page the on-call about v2.1')]))
    expect(paged.status).toBe(200)
    const { body: parent } = await snapshotOf(s, threadId)
    const [awaiting] = parent.awaitingExternal ?? []
    expect(awaiting).toMatchObject({ toolName: 'notify_oncall' })
    const assistant = parent.messages.find((m) => m.role === 'assistant')!
    const before = await parentBytes(s, threadId)

    const fork = await postFork(s, threadId, { at: { messageId: assistant.id } })
    expect(fork.status).toBe(201)
    const { body: forked } = await snapshotOf(s, fork.body.threadId)
    expect(forked.awaitingExternal).toBeUndefined()
    expect(forked.messages.at(-1)).toMatchObject({ role: 'tool', toolCallId: awaiting!.toolCallId })
    expect(JSON.parse((forked.messages.at(-1) as { content: string }).content)).toMatchObject({ status: 'cancelled' })
    const call = await s.store.getToolCall(threadKey('alice', fork.body.threadId), awaiting!.toolCallId)
    expect(call?.status).toBe('cancelled')
    expect(await parentBytes(s, threadId)).toEqual(before)

    // A result posted to the fork runs nothing there (the call is settled: `settled`, no run); the parent's call still
    // waits for it and takes it.
    const late = { id: 'result-1', role: 'tool' as const, toolCallId: awaiting!.toolCallId, content: '"ana"' }
    const toFork = await s.postRun(runInput(fork.body.threadId, [late]))
    expect(toFork.events).toEqual([])
    expect(JSON.parse(toFork.raw)).toMatchObject({
      settled: [{ toolCallId: awaiting!.toolCallId, status: 'cancelled' }],
    })
    expect((await snapshotOf(s, fork.body.threadId)).body.messages).toEqual(forked.messages)
    expect((await snapshotOf(s, threadId)).body.awaitingExternal).toEqual(parent.awaitingExternal)
    const toParent = await s.postRun(runInput(threadId, [late]))
    expect(toParent.status).toBe(200)
  })
})
