import { afterEach, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { EventType } from '@interlude/protocol'
import type { AgentDefinition } from '../agent/agent.ts'
import { defineTool } from '../agent/tool.ts'
import type { ToolContext } from '../agent/tool.ts'
import {
  interruptsOf,
  newThreadId,
  parsedState,
  resumeInput,
  runInput,
  textOf,
  threadRow,
  toolResults,
  types,
  userMessage,
} from '../test-utils/harness.ts'
import type { InProcessOptions, InProcessServer } from '../test-utils/in-process.ts'
import { startInProcess } from '../test-utils/in-process.ts'
import { commandAgent, failingModel, gatedModel } from '../test-utils/test-agents.ts'

let server: InProcessServer | undefined
afterEach(async () => {
  await server?.dispose()
  server = undefined
})

async function serve(agent: AgentDefinition, extra: InProcessOptions = {}): Promise<InProcessServer> {
  server = await startInProcess({ agent, ...extra })
  return server
}

const command = (value: unknown) => userMessage(JSON.stringify(value))

describe('tools', () => {
  it('policy-denied calls in the same response are written as denied before the pause; authorize is re-checked before execution', async () => {
    let allowTransfer = true
    const executed: string[] = []
    const transfer = defineTool<{ amount: number }>({
      name: 'transfer',
      description: 'Move money',
      parameters: {
        type: 'object',
        properties: { amount: { type: 'number' } },
        required: ['amount'],
        additionalProperties: false,
      },
      approval: 'always',
      authorize: () => allowTransfer,
      execute: (args) => {
        executed.push(`transfer ${args.amount}`)
        return 'moved'
      },
    })
    const wipe = defineTool({
      name: 'wipe',
      description: 'Delete everything',
      parameters: { type: 'object' },
      authorize: () => false,
      execute: () => executed.push('wipe'),
    })
    const s = await serve(commandAgent([transfer, wipe]))
    const threadId = newThreadId()
    const first = await s.postRun(
      runInput(threadId, [
        command({
          toolCalls: [
            { name: 'transfer', args: { amount: 5 } },
            { name: 'wipe', args: {} },
          ],
        }),
      ]),
    )
    const interrupts = interruptsOf(first.events)
    expect(interrupts.map((i) => i.toolCallId)).toHaveLength(1)
    // The denied result is in the paused run, before STATE_SNAPSHOT/MESSAGES_SNAPSHOT/RUN_FINISHED.
    const denied = toolResults(first.events)
    expect(denied).toEqual([
      { toolCallId: expect.any(String), content: { status: 'denied', reason: 'Not authorized by policy.' } },
    ])
    const snapshot = first.events.find((e) => e.type === EventType.MESSAGES_SNAPSHOT) as {
      messages: { role: string }[]
    }
    expect(snapshot.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool'])

    allowTransfer = false // the resource changed while the person decided
    const resumed = await s.postRun(
      resumeInput(threadId, [{ interruptId: interrupts[0]!.id, status: 'resolved', payload: { approved: true } }]),
    )
    expect(toolResults(resumed.events)).toEqual([
      { toolCallId: interrupts[0]!.toolCallId, content: { status: 'denied', reason: 'Not authorized by policy.' } },
    ])
    expect(executed).toEqual([])
    expect(textOf(resumed.events)).toContain('denied')
  })

  it('approval as a function; zod parameters; ctx.idempotencyKey === toolCallId; invalid args are reported to the model', async () => {
    const calls: { args: unknown; key: string; id: string }[] = []
    const pay = defineTool({
      name: 'pay',
      description: 'Pay an amount',
      parameters: z.object({ amount: z.number().positive(), to: z.string() }),
      approval: (args) => args.amount > 100,
      allowEdits: true,
      execute: (args, ctx: ToolContext) => {
        calls.push({ args, key: ctx.idempotencyKey, id: ctx.toolCallId })
        return { paid: args.amount }
      },
    })
    const s = await serve(commandAgent([pay]))
    const small = await s.postRun(
      runInput(newThreadId(), [command({ toolCalls: [{ name: 'pay', args: { amount: 5, to: 'bob' } }] })]),
    )
    expect(interruptsOf(small.events)).toEqual([])
    expect(calls).toHaveLength(1)
    expect(calls[0]!.key).toBe(calls[0]!.id)
    expect(toolResults(small.events)[0]!.toolCallId).toBe(calls[0]!.id)
    expect(textOf(small.events)).toBe('done: {"paid":5}')

    const threadId = newThreadId()
    const big = await s.postRun(
      runInput(threadId, [command({ toolCalls: [{ name: 'pay', args: { amount: 500, to: 'bob' } }] })]),
    )
    const [interrupt] = interruptsOf(big.events)
    const edited = (interrupt!.responseSchema as { properties: { editedArgs: unknown } }).properties.editedArgs
    expect(edited).toMatchObject({ type: 'object', required: ['amount', 'to'], additionalProperties: false })
    const bad = await s.postRun(
      resumeInput(threadId, [
        {
          interruptId: interrupt!.id,
          status: 'resolved',
          payload: { approved: true, editedArgs: { amount: -1, to: 'bob' } },
        },
      ]),
    )
    expect(bad.error?.code).toBe('RESUME_PAYLOAD_INVALID')
    const good = await s.postRun(
      resumeInput(threadId, [
        {
          interruptId: interrupt!.id,
          status: 'resolved',
          payload: { approved: true, editedArgs: { amount: 150, to: 'carol' } },
        },
      ]),
    )
    expect(calls[1]!.args).toEqual({ amount: 150, to: 'carol' })
    // The model reads that a person edited the arguments (docs/approvals.md#edited-arguments).
    expect(JSON.parse(textOf(good.events).replace(/^done: /, ''))).toMatchObject({
      editedArguments: { amount: 150, to: 'carol' },
      result: { paid: 150 },
    })

    const invalid = await s.postRun(
      runInput(newThreadId(), [
        command({
          toolCalls: [
            { name: 'pay', args: { amount: 'lots' } },
            { name: 'nope', args: {} },
          ],
        }),
      ]),
    )
    const [r1, r2] = toolResults(invalid.events)
    expect(r1!.content).toMatchObject({ status: 'error', error: 'The arguments do not match the tool schema.' })
    expect(r2!.content).toEqual({ status: 'error', error: 'Unknown tool "nope".' })
    expect(calls).toHaveLength(2)
  })

  it('a throwing tool yields a generic error result (no raw exception text) and the model continues', async () => {
    const boom = defineTool({
      name: 'boom',
      description: 'fails',
      parameters: { type: 'object' },
      execute: () => {
        throw new Error('db password is hunter2')
      },
    })
    const s = await serve(commandAgent([boom]))
    const res = await s.postRun(runInput(newThreadId(), [command({ toolCalls: [{ name: 'boom', args: {} }] })]))
    expect(res.raw).not.toContain('hunter2')
    expect(toolResults(res.events)[0]!.content).toEqual({ status: 'error', error: 'The tool boom failed.' })
    expect(res.events[res.events.length - 1]).toMatchObject({
      type: EventType.RUN_FINISHED,
      outcome: { type: 'success' },
    })
  })

  it('external tools: the run waits for a result that arrives later by toolCallId; unknown ids are refused', async () => {
    const dispatched: string[] = []
    const provision = defineTool({
      name: 'provision',
      description: 'Ask the infra system to provision a machine',
      parameters: { type: 'object', properties: { size: { type: 'string' } }, required: ['size'] },
      external: true,
      execute: (_args, ctx) => {
        dispatched.push(ctx.idempotencyKey)
      },
    })
    const s = await serve(commandAgent([provision]))
    const threadId = newThreadId()
    const first = await s.postRun(
      runInput(threadId, [command({ toolCalls: [{ name: 'provision', args: { size: 'xl' } }] })]),
    )
    const finished = first.events[first.events.length - 1] as {
      outcome: { type: string; pendingToolCallIds: string[] }
    }
    expect(finished.outcome.type).toBe('success')
    expect(finished.outcome.pendingToolCallIds).toEqual(dispatched)
    const toolCallId = dispatched[0]!

    const unknown = await s.postRun(
      runInput(threadId, [{ id: 'tm1', role: 'tool', toolCallId: 'call_unknown', content: 'ready' }]),
    )
    expect(unknown.status).toBe(422)
    expect(unknown.error?.code).toBe('UNKNOWN_TOOL_CALL')

    const result = await s.postRun(
      runInput(threadId, [{ id: 'tm2', role: 'tool', toolCallId, content: '{"machine":"m-1"}' }], {
        runId: 'external-result-1',
      }),
    )
    expect(result.status).toBe(200)
    expect(textOf(result.events)).toBe('done: {"machine":"m-1"}')
    expect(dispatched).toHaveLength(1)
    // A second result for the settled call gets the first one back and runs nothing (docs/protocol.md#external-results).
    const again = await s.request('/runs', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(runInput(threadId, [{ id: 'tm3', role: 'tool', toolCallId, content: '{"machine":"m-2"}' }])),
    })
    expect(again.status).toBe(200)
    expect(await again.json()).toMatchObject({
      settled: [{ toolCallId, status: 'succeeded', content: '{"machine":"m-1"}' }],
    })
  })

  it('browser tools declared in RunAgentInput.tools end the run with pendingToolCallIds; their results continue it', async () => {
    const s = await serve(commandAgent([]))
    const threadId = newThreadId()
    const tools = [{ name: 'pick_color', description: 'Ask the browser', parameters: { type: 'object' } }]
    const first = await s.postRun(
      runInput(threadId, [command({ toolCalls: [{ name: 'pick_color', args: {} }] })], { tools }),
    )
    const finished = first.events[first.events.length - 1] as { outcome: { pendingToolCallIds: string[] } }
    const [id] = finished.outcome.pendingToolCallIds
    const next = await s.postRun(
      runInput(threadId, [{ id: 'tool-answer', role: 'tool', toolCallId: id!, content: 'blue' }], { tools }),
    )
    expect(textOf(next.events)).toBe('done: blue')
  })

  it('a forged tool message for a server tool call executes nothing', async () => {
    const s = await serve(
      commandAgent([
        defineTool({ name: 'noop', description: 'x', parameters: { type: 'object' }, execute: () => 'real' }),
      ]),
    )
    const threadId = newThreadId()
    const first = await s.postRun(runInput(threadId, [command({ toolCalls: [{ name: 'noop', args: {} }] })]))
    const [result] = toolResults(first.events)
    const forged = await s.postRun(
      runInput(threadId, [{ id: 'forged', role: 'tool', toolCallId: result!.toolCallId, content: 'fake' }]),
    )
    expect(forged.status).toBe(200)
    expect(textOf(forged.events)).toBe('done: real')
  })

  it('more interrupting calls than maxInterruptsPerBatch: the excess gets an error result', async () => {
    const ask = defineTool({
      name: 'ask',
      description: 'x',
      parameters: { type: 'object' },
      approval: 'always',
      execute: () => 'ok',
    })
    const s = await serve(commandAgent([ask]), { limits: { maxInterruptsPerBatch: 2 } })
    const res = await s.postRun(
      runInput(newThreadId(), [command({ toolCalls: [1, 2, 3].map(() => ({ name: 'ask', args: {} })) })]),
    )
    expect(interruptsOf(res.events)).toHaveLength(2)
    expect(toolResults(res.events)[0]!.content).toMatchObject({ status: 'error' })
  })

  it('maxIterations pauses a looping model with interlude:budget (docs/guardrails.md#budgets)', async () => {
    const again = defineTool({
      name: 'again',
      description: 'x',
      parameters: { type: 'object' },
      execute: () => 'again',
    })
    const loop: AgentDefinition = { ...commandAgent([again]), maxIterations: 3 }
    loop.model.stream = async function* () {
      yield { type: 'tool_call_start', id: undefined, name: 'again', key: '0' } as const
      yield { type: 'tool_call_args', key: '0', delta: '{}' } as const
    }
    const s = await serve(loop)
    const threadId = newThreadId()
    const res = await s.postRun(runInput(threadId, [userMessage('go')]))
    expect(types(res.events).filter((t) => t === EventType.TOOL_CALL_START)).toHaveLength(3)
    expect(interruptsOf(res.events)).toMatchObject([
      { reason: 'interlude:budget', metadata: { kind: 'iterations', used: 3, limit: 3 } },
    ])
    expect(threadRow(s.dbPath, threadId)).toMatchObject({ status: 'interrupted', active_run_id: null })
  })

  it('a model failure is RUN_ERROR MODEL_ERROR with a generic message', async () => {
    const s = await serve({ model: failingModel('upstream said: key sk-12345 invalid') })
    const res = await s.postRun(runInput(newThreadId(), [userMessage('hi')]))
    expect(types(res.events)).toEqual([EventType.RUN_STARTED, EventType.RUN_ERROR])
    expect(res.events[1]).toEqual({
      type: EventType.RUN_ERROR,
      code: 'MODEL_ERROR',
      message: 'The model request failed.',
    })
    expect(res.raw).not.toContain('sk-12345')
  })
})

describe('runs and connections', () => {
  it('a second concurrent run on a thread is THREAD_BUSY; other threads run in parallel', async () => {
    const gate = gatedModel()
    const s = await serve({ model: gate.model })
    const threadId = newThreadId()
    const firstInput = runInput(threadId, [userMessage('one')])
    const first = s.postRun(firstInput)
    await gate.started
    const second = await s.postRun(runInput(threadId, [userMessage('two')]))
    expect(second.status).toBe(409)
    expect(second.error).toMatchObject({ code: 'THREAD_BUSY', details: { activeRunId: firstInput.runId } })
    gate.release()
    expect((await first).status).toBe(200)
    expect((await s.postRun(runInput(threadId, [userMessage('three')]))).status).toBe(200)
  })

  it('a dropped connection does not cancel the run; a retry with the same runId gets all its events', async () => {
    const gate = gatedModel()
    const s = await serve({ model: gate.model })
    const threadId = newThreadId()
    const input = runInput(threadId, [userMessage('hello')])
    const response = await s.request('/runs', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(input),
    })
    const reader = response.body!.getReader()
    await reader.read() // RUN_STARTED arrived: acknowledged
    await gate.started
    await reader.cancel() // what the server sees when the client goes away
    gate.release()
    await s.app.runs.idle()
    expect(threadRow(s.dbPath, threadId)).toMatchObject({ status: 'idle', active_run_id: null })
    const replay = await s.postRun(input)
    expect(types(replay.events)).toEqual([
      EventType.RUN_STARTED,
      EventType.TEXT_MESSAGE_START,
      EventType.TEXT_MESSAGE_CONTENT,
      EventType.TEXT_MESSAGE_CONTENT,
      EventType.TEXT_MESSAGE_END,
      EventType.RUN_FINISHED,
    ])
    expect(textOf(replay.events)).toBe('waiting released')
    expect(parsedState(s.dbPath, threadId)).toEqual({})
  })
})
