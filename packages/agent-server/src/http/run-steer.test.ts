import { describe, expect, it } from 'vitest'
import { EventType } from '@interlude/protocol'
import type { AgUiEvent } from '@interlude/protocol'
import type { GuardrailDefinition } from '../agent/guardrail.ts'
import type { Store } from '../store/store.ts'
import { threadKey } from '../store/thread-key.ts'
import { until } from '../test-utils/child-server.ts'
import { interruptsOf, newThreadId, resumeInput, runInput, types, userMessage } from '../test-utils/harness.ts'
import type { InProcessOptions, InProcessServer } from '../test-utils/in-process.ts'
import { serversPerTest } from '../test-utils/in-process.ts'
import { interceptStore } from '../test-utils/intercept-store.ts'
import {
  deploy,
  historyOf,
  holdRun,
  inputWith,
  lifecycle,
  multitask,
  outcomeOf,
  post,
  queueStores,
  slowTool,
} from '../test-utils/queue-harness.ts'
import { queueModel } from '../test-utils/queue-model.ts'
import { commandAgent } from '../test-utils/test-agents.ts'

/**
 * `steer` (docs/protocol.md#multitask): the new user message joins the running turn before its next model request,
 * in order in the log and in the model's history, without a run of its own; it becomes queued input when there is no
 * running turn to join. On SQLite and on PostgreSQL, through the real app.
 */
const server = serversPerTest()
const STORES = await queueStores('steer on PostgreSQL')

/** Starts a run that calls `slow` and waits until the tool runs. */
async function slowRun(s: InProcessServer, slow: ReturnType<typeof slowTool>, threadId: string) {
  const a = runInput(threadId, [userMessage(JSON.stringify({ toolCalls: [{ name: 'slow', args: {} }] }))])
  const streaming = s.postRun(a)
  await until(() => slow.running(), 'the tool runs')
  return { a, streaming }
}

/** The user message `messageId` as the log shows it where it joined: start (role user), content, end. */
function joined(events: readonly AgUiEvent[], messageId: string, text: string): number {
  const at = events.findIndex((e) => e.type === EventType.TEXT_MESSAGE_START && e.messageId === messageId)
  expect(at).toBeGreaterThan(0)
  expect(events.slice(at, at + 3)).toEqual([
    { type: EventType.TEXT_MESSAGE_START, messageId, role: 'user' },
    { type: EventType.TEXT_MESSAGE_CONTENT, messageId, delta: text },
    { type: EventType.TEXT_MESSAGE_END, messageId },
  ])
  return at
}

describe.each(STORES)('steer on $name', ({ options, store: openStore }) => {
  async function start(extra: InProcessOptions = {}, tools = [deploy]) {
    const q = queueModel()
    const s = await server({ ...(await options()), agent: commandAgent(tools, { model: q.model }), ...extra })
    return { s, q }
  }

  it('S while A streams its answer: 202 steered with A, S joins A in order, A answers it, no new run', async () => {
    const { s, q } = await start()
    const threadId = newThreadId()
    const { input: a, streaming } = await holdRun(s, q, threadId)
    const steer = inputWith('steer', 'S', threadId)
    const sId = steer.messages[0]!.id
    expect(await post(s, steer)).toEqual({ status: 202, body: { threadId, runId: a.runId, steered: true } })
    q.release('hold A')
    const stream = await streaming
    // A's own stream: its answer, then S where it joined, then the answer to S, then A's end.
    const at = joined(stream.events, sId, 'S')
    const before = stream.events.slice(0, at)
    expect(before.filter((e) => e.type === EventType.TEXT_MESSAGE_END)).toHaveLength(1)
    expect(types(stream.events.slice(at + 3))).toEqual([
      EventType.TEXT_MESSAGE_START,
      EventType.TEXT_MESSAGE_CONTENT,
      EventType.TEXT_MESSAGE_END,
      EventType.RUN_FINISHED,
    ])
    expect(q.started).toEqual(['hold A', 'S'])
    expect(q.requests[1]!.at(-1)?.id).toBe(sId)
    expect(await historyOf(s, threadId)).toEqual([
      'user: hold A',
      'assistant: waiting answer hold A',
      'user: S',
      'assistant: answer S',
    ])
    expect(await lifecycle(s, threadId)).toEqual([`start ${a.runId}`, `end ${a.runId}`])
    expect(await s.store.getRun(threadKey('alice', threadId), steer.runId)).toBeUndefined()
    expect(await s.store.listQueuedInputs!(threadKey('alice', threadId))).toEqual([])
    // A retry of the steer (its 202 was lost) answers the run that took it and writes nothing.
    expect(await post(s, steer)).toEqual({ status: 202, body: { threadId, runId: a.runId, steered: true } })
    expect(await historyOf(s, threadId)).toHaveLength(4)
    expect(await lifecycle(s, threadId)).toHaveLength(2)
  })

  it('a steer that adds no message is refused like any busy input (409), not answered as a retry', async () => {
    const { s, q } = await start()
    const threadId = newThreadId()
    const { input: a, streaming } = await holdRun(s, q, threadId)
    const repeat = { ...a, runId: 'run-repeat', ...multitask('steer') }
    const refused = await s.postRun(repeat)
    expect({ status: refused.status, code: refused.error?.code }).toEqual({ status: 409, code: 'THREAD_BUSY' })
    expect(await s.store.listQueuedInputs!(threadKey('alice', threadId))).toEqual([])
    q.release('hold A')
    expect((await streaming).status).toBe(200)
    expect(await lifecycle(s, threadId)).toEqual([`start ${a.runId}`, `end ${a.runId}`])
  })

  it('S while a tool runs: the next model request reads the tool result, then S', async () => {
    const slow = slowTool()
    const { s, q } = await start({}, [slow.tool])
    const threadId = newThreadId()
    const { a, streaming } = await slowRun(s, slow, threadId)
    const steer = inputWith('steer', 'S', threadId)
    expect(await post(s, steer)).toEqual({ status: 202, body: { threadId, runId: a.runId, steered: true } })
    slow.open()
    const stream = await streaming
    const at = joined(stream.events, steer.messages[0]!.id, 'S')
    expect(stream.events.findIndex((e) => e.type === EventType.TOOL_CALL_RESULT)).toBeLessThan(at)
    expect(q.requests[1]!.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'user'])
    expect((await historyOf(s, threadId)).slice(2)).toEqual(['tool: slow done', 'user: S', 'assistant: answer S'])
  })

  it('on an idle thread a steer starts a run like any input: 200 and its stream', async () => {
    const { s } = await start()
    const threadId = newThreadId()
    const steer = inputWith('steer', 'S', threadId)
    const answer = await s.postRun(steer)
    expect(answer.status).toBe(200)
    expect(types(answer.events).at(-1)).toBe(EventType.RUN_FINISHED)
    expect(await lifecycle(s, threadId)).toEqual([`start ${steer.runId}`, `end ${steer.runId}`])
  })

  it('on a thread paused on a batch a steer is queued input: 202 queued, it runs after the continuation', async () => {
    const { s, q } = await start()
    const threadId = newThreadId()
    const paused = await s.postRun(
      runInput(threadId, [userMessage(JSON.stringify({ toolCalls: [{ name: 'deploy', args: {} }] }))]),
    )
    const [interrupt] = interruptsOf(paused.events)
    const steer = inputWith('steer', 'S', threadId)
    expect(await post(s, steer)).toEqual({ status: 202, body: { threadId, runId: steer.runId, queued: 1 } })
    const resume = resumeInput(threadId, [
      { interruptId: interrupt!.id, status: 'resolved', payload: { approved: true } },
    ])
    expect((await s.postRun(resume)).status).toBe(200)
    await until(async () => (await outcomeOf(s, threadId, steer.runId)) === 'success', 'S runs')
    expect((await lifecycle(s, threadId)).slice(2)).toEqual([
      `start ${resume.runId}`,
      `end ${resume.runId}`,
      `start ${steer.runId}`,
      `end ${steer.runId}`,
    ])
    expect(q.started.at(-1)).toBe('S')
  })

  it('A ends before it takes the steer: S becomes queued input and runs next, as a run of its own', async () => {
    let letFinish!: () => void
    const finishing = new Promise<void>((resolve) => (letFinish = resolve))
    let held = false
    const store: Store = await openStore()
    const wrapped = interceptStore(store, {
      finishRun: async (request) => {
        held = true
        await finishing
        return store.finishRun(request)
      },
    })
    const { s, q } = await start({ store: wrapped })
    const threadId = newThreadId()
    const { input: a, streaming } = await holdRun(s, q, threadId)
    q.release('hold A')
    // A has answered and taken no steer; its end is being written.
    await until(() => held, 'A ends')
    const steer = inputWith('steer', 'S', threadId)
    expect(await post(s, steer)).toEqual({ status: 202, body: { threadId, runId: a.runId, steered: true } })
    letFinish()
    await streaming
    await until(async () => (await outcomeOf(s, threadId, steer.runId)) === 'success', 'S runs')
    expect(await lifecycle(s, threadId)).toEqual([
      `start ${a.runId}`,
      `end ${a.runId}`,
      `start ${steer.runId}`,
      `end ${steer.runId}`,
    ])
    expect((await historyOf(s, threadId)).slice(2)).toEqual(['user: S', 'assistant: answer S'])
  })

  it('a steer not taken yet can be cancelled by its runId: it never joins', async () => {
    const slow = slowTool()
    const { s, q } = await start({}, [slow.tool])
    const threadId = newThreadId()
    const { streaming } = await slowRun(s, slow, threadId)
    const steer = inputWith('steer', 'S', threadId)
    expect((await post(s, steer)).status).toBe(202)
    const cancelled = await s.request(`/threads/${threadId}/runs/${steer.runId}/cancel`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{}',
    })
    expect(await cancelled.json()).toEqual({ runId: steer.runId, status: 'cancelled', queued: true })
    slow.open()
    await streaming
    expect(q.started).toHaveLength(2)
    expect(await historyOf(s, threadId)).not.toContain('user: S')
  })

  it('a steered message passes the input guardrails: a failing one pauses the turn it joined, before the model', async () => {
    const noDrop: GuardrailDefinition<string> = {
      name: 'no-drop',
      on: 'input',
      check: (text) => (/drop table/i.test(text) ? { pass: false, reason: 'looks like SQL' } : { pass: true }),
    }
    const q = queueModel()
    const s = await server({ ...(await options()), agent: commandAgent([], { model: q.model, guardrails: [noDrop] }) })
    const threadId = newThreadId()
    const { input: a, streaming } = await holdRun(s, q, threadId)
    const steer = inputWith('steer', 'now DROP TABLE users', threadId)
    expect(await post(s, steer)).toEqual({ status: 202, body: { threadId, runId: a.runId, steered: true } })
    q.release('hold A')
    const stream = await streaming
    joined(stream.events, steer.messages[0]!.id, 'now DROP TABLE users')
    const [interrupt] = interruptsOf(stream.events)
    expect(interrupt!.metadata).toMatchObject({ guardrail: 'no-drop', on: 'input', content: 'now DROP TABLE users' })
    expect(q.started).toEqual(['hold A'])
  })
})
