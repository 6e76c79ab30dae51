import { afterEach, describe, expect, it } from 'vitest'
import { EventType } from '@interlude/protocol'
import type { Grant, Interrupt } from '@interlude/protocol'
import { interruptsOf, newThreadId, resumeInput, runInput, userMessage } from '../test-utils/harness.ts'
import type { InProcessServer } from '../test-utils/in-process.ts'
import { startInProcess } from '../test-utils/in-process.ts'
import { decisionEvents, resolved } from '../test-utils/resume-entries.ts'
import { threadKey } from '../store/thread-key.ts'

/**
 * A bounded grant across a crash (docs/decisions.md#bounded-grants): a process that took a grant for a call and wrote
 * the model's answer into the history died before recording the call. The continuation handles the call as the tool
 * step would have and finds the take again — also when it used the grant's last call, or the grant was revoked
 * since: the deploy runs without asking, and the grant is used once, not twice.
 */
const servers: InProcessServer[] = []
afterEach(async () => {
  for (const s of servers.splice(0)) await s.dispose()
})

const toolOf = (i: Interrupt) => (i.metadata as { toolName: string }).toolName

describe('a grant taken by a run that died before recording its calls', () => {
  it.each([
    { name: 'a grant of 3', calls: 3, revoke: false, left: [2] },
    { name: "the grant's last call", calls: 1, revoke: false, left: [] },
    { name: 'a grant revoked after the take', calls: 3, revoke: true, left: [] },
  ])('$name: the continuation finds the take, and the call runs without a pause', async ({ calls, revoke, left }) => {
    // Shared mode: the dead run is continued on first touch once its lease has ended.
    const s = await startInProcess({ exclusive: false })
    servers.push(s)
    const threadId = newThreadId()
    const key = threadKey('alice', threadId)
    const first = await s.postRun(runInput(threadId, [userMessage('deploy v2 to staging')]))
    const answers = interruptsOf(first.events).map((i) =>
      resolved(i, { approved: true, ...(toolOf(i) === 'deploy' ? { grant: { calls, scope: 'thread' } } : {}) }),
    )
    expect((await s.postRun(resumeInput(threadId, answers))).status).toBe(200)
    const grants = async () =>
      ((await (await s.request(`/grants?threadId=${threadId}`)).json()) as { items: Grant[] }).items
    const [grant] = await grants()
    expect(grant?.callsLeft).toBe(calls)
    // The arguments of the approved staging deploy: the dead attempt's call asks for the same.
    const argsText = (await s.store.listToolCalls(key, {})).find((c) => c.toolName === 'deploy')!.argsText

    // What the dead process left: its run (lease ended), the grant taken for the model's answer's call, the answer in
    // the history — and the call not recorded.
    const runId = 'run-dead'
    const now = Date.now()
    const thread = (await s.store.getThread(key))!
    const started = await s.store.startInputRun({
      threadId: key,
      ownerId: 'alice',
      runId,
      parentRunId: undefined,
      expectedRevision: thread.revision,
      initialState: {},
      messages: [userMessage('deploy v2 to staging again', 'u-again')],
      toolResults: [],
      now,
      executorId: 'exec-dead',
      leaseUntil: now - 1,
    })
    expect(started.ok).toBe(true)
    await s.store.appendEvents(key, runId, [
      { type: EventType.RUN_STARTED, json: JSON.stringify({ type: EventType.RUN_STARTED, threadId, runId }) },
    ])
    const toolCallId = 'call_after_crash'
    const take = { grantId: grant!.grantId, owner: 'alice', threadId: key, toolCallId, runId, now }
    expect(await s.store.grants!.take(take)).toMatchObject({ via: 'grant', toolCallId })
    if (revoke) expect((await s.request(`/grants/${grant!.grantId}`, { method: 'DELETE' })).status).toBe(204)
    await s.store.appendMessages(key, runId, [
      {
        id: 'a-dead',
        role: 'assistant',
        toolCalls: [{ id: toolCallId, type: 'function', function: { name: 'deploy', arguments: argsText } }],
      },
    ])
    expect(await s.store.getToolCall(key, toolCallId)).toBeUndefined()

    // First touch: the continuation runs the call on its take, in the same run; nothing asks.
    expect((await s.request(`/threads/${threadId}`)).status).toBe(200)
    await expect.poll(async () => (await s.store.getRun(key, runId))?.status, { timeout: 15_000 }).toBe('succeeded')
    const events = (await s.threadEvents(threadId)).events
    expect(interruptsOf(events.filter((e) => (e as { runId?: string }).runId === runId))).toEqual([])
    expect(decisionEvents(events)).toContainEqual(expect.objectContaining({ via: 'grant', toolCallId, runId }))
    expect((await s.store.getToolCall(key, toolCallId))?.status).toBe('succeeded')
    const snapshot = (await (await s.request(`/threads/${threadId}`)).json()) as { state: { deployments: unknown[] } }
    expect(snapshot.state.deployments).toHaveLength(2)
    // One call of the grant: the dead attempt's take, found again (a used-up or revoked grant is listed no more).
    expect((await grants()).map((g) => g.callsLeft)).toEqual(left)
  })
})
