import { describe, expect, it } from 'vitest'
import { EventType, InterludeError } from '@interlude/protocol'
import type { AgUiEvent } from '@interlude/protocol'
import { resolveAgent } from '../../agent/agent.ts'
import { defineTool } from '../../agent/tool.ts'
import type { ModelChunk } from '../../models/model.ts'
import { scriptedModel } from '../../models/scripted.ts'
import { ValidatorCache } from '../../schema/validator-cache.ts'
import type { ModelEventsOptions, ModelResponse } from './model-events.ts'
import { modelEvents, modelTools } from './model-events.ts'
import { RunCancelled } from '../run-cancelled.ts'

async function* chunks(list: readonly ModelChunk[], afterEach?: (index: number) => void): AsyncGenerator<ModelChunk> {
  for (const [index, chunk] of list.entries()) {
    yield chunk
    afterEach?.(index)
  }
}

/** Every event the translation yields, then its return value (or what it threw). */
async function translate(
  stream: AsyncIterable<ModelChunk>,
  options: Partial<ModelEventsOptions> = {},
): Promise<{ events: AgUiEvent[]; response?: ModelResponse; error?: unknown }> {
  const events: AgUiEvent[] = []
  const generator = modelEvents(stream, {
    messageId: 'msg_1',
    signal: new AbortController().signal,
    isTaken: () => false,
    ...options,
  })
  try {
    for (;;) {
      const next = await generator.next()
      if (next.done) return { events, response: next.value }
      events.push(next.value)
    }
  } catch (error) {
    return { events, error }
  }
}

const text = (delta: string): ModelChunk => ({ type: 'text', delta })
const start = (key: string, name: string, id?: string): ModelChunk => ({ type: 'tool_call_start', id, name, key })
const args = (key: string, delta: string): ModelChunk => ({ type: 'tool_call_args', key, delta })

describe('model stream → AG-UI events', () => {
  it('text, then tool calls: one text message closed before the first call; every call ended at the end', async () => {
    const { events, response } = await translate(
      chunks([
        text('Deploying '),
        text(''),
        text('now.'),
        start('0', 'deploy', 'call_a'),
        args('0', '{"v":'),
        start('1', 'notify', 'call_b'),
        args('0', '1}'),
        args('1', ''),
        args('9', '{"lost":true}'),
        args('1', '{}'),
      ]),
    )
    expect(events).toEqual([
      { type: EventType.TEXT_MESSAGE_START, messageId: 'msg_1', role: 'assistant' },
      { type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'msg_1', delta: 'Deploying ' },
      { type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'msg_1', delta: 'now.' },
      { type: EventType.TEXT_MESSAGE_END, messageId: 'msg_1' },
      { type: EventType.TOOL_CALL_START, toolCallId: 'call_a', toolCallName: 'deploy', parentMessageId: 'msg_1' },
      { type: EventType.TOOL_CALL_ARGS, toolCallId: 'call_a', delta: '{"v":' },
      { type: EventType.TOOL_CALL_START, toolCallId: 'call_b', toolCallName: 'notify', parentMessageId: 'msg_1' },
      { type: EventType.TOOL_CALL_ARGS, toolCallId: 'call_a', delta: '1}' },
      { type: EventType.TOOL_CALL_ARGS, toolCallId: 'call_b', delta: '{}' },
      { type: EventType.TOOL_CALL_END, toolCallId: 'call_a' },
      { type: EventType.TOOL_CALL_END, toolCallId: 'call_b' },
    ])
    expect(response).toEqual({
      messageId: 'msg_1',
      text: 'Deploying now.',
      calls: [
        { id: 'call_a', name: 'deploy', argsText: '{"v":1}' },
        { id: 'call_b', name: 'notify', argsText: '{}' },
      ],
    })
  })

  it('a text-only answer ends its message; an empty stream yields nothing', async () => {
    const answer = await translate(chunks([text('hi')]))
    expect(answer.events.map((e) => e.type)).toEqual([
      EventType.TEXT_MESSAGE_START,
      EventType.TEXT_MESSAGE_CONTENT,
      EventType.TEXT_MESSAGE_END,
    ])
    expect(answer.response).toEqual({ messageId: 'msg_1', text: 'hi', calls: [] })
    expect(await translate(chunks([]))).toEqual({ events: [], response: { messageId: 'msg_1', text: '', calls: [] } })
  })

  it('call ids: the model’s id when well-formed and unused, otherwise a fresh one', async () => {
    const { response } = await translate(
      chunks([
        start('0', 'a', 'call_ok'),
        start('1', 'a', 'call_ok'),
        start('2', 'a', 'has space'),
        start('3', 'a', undefined),
        start('4', 'a', 'call_known'),
      ]),
      { isTaken: (id) => id === 'call_known' },
    )
    const ids = response!.calls.map((c) => c.id)
    expect(ids[0]).toBe('call_ok')
    for (const id of ids.slice(1)) expect(id).toMatch(/^call_[0-9a-f-]{36}$/)
    expect(new Set(ids).size).toBe(ids.length)
  })

  it('a failing stream is MODEL_ERROR with the cause kept off the message', async () => {
    const secret = new Error('upstream key sk-123 rejected')
    const failing = async function* (): AsyncGenerator<ModelChunk> {
      yield text('partial ')
      throw secret
    }
    const { events, error } = await translate(failing())
    expect(events.map((e) => e.type)).toEqual([
      EventType.TEXT_MESSAGE_START,
      EventType.TEXT_MESSAGE_CONTENT,
      EventType.TEXT_MESSAGE_END,
    ])
    expect(InterludeError.isInstance(error)).toBe(true)
    expect(error).toMatchObject({ code: 'MODEL_ERROR', message: 'The model request failed.', cause: secret })
  })

  it('a provider’s typed error keeps its code, message and details; usage chunks go to onUsage, not to events', async () => {
    const typed = new InterludeError(
      'MODEL_ERROR',
      'The model’s answer was cut off at its output limit; it was not kept.',
      {
        details: { kind: 'truncated', retryable: false },
      },
    )
    const usage: unknown[] = []
    const failing = async function* (): AsyncGenerator<ModelChunk> {
      yield text('cut')
      yield { type: 'usage', usage: { inputTokens: 3, outputTokens: 4, totalTokens: 7 } }
      throw typed
    }
    const { events, error } = await translate(failing(), { onUsage: (u) => usage.push(u) })
    expect(events.map((e) => e.type)).toEqual([
      EventType.TEXT_MESSAGE_START,
      EventType.TEXT_MESSAGE_CONTENT,
      EventType.TEXT_MESSAGE_END,
    ])
    expect(error).toBe(typed)
    expect(usage).toEqual([{ inputTokens: 3, outputTokens: 4, totalTokens: 7 }])
  })

  it('a stream failing mid-arguments closes the text and every call, in the cancel order, then is MODEL_ERROR', async () => {
    const failing = async function* (): AsyncGenerator<ModelChunk> {
      yield text('a')
      yield start('0', 'publish', 'call_a')
      yield args('0', '{"v":')
      yield start('1', 'deploy', 'call_b')
      yield args('1', '{"env')
      throw new Error('socket hang up')
    }
    const { events, error } = await translate(failing())
    expect(events.map((e) => e.type)).toEqual([
      EventType.TEXT_MESSAGE_START,
      EventType.TEXT_MESSAGE_CONTENT,
      EventType.TEXT_MESSAGE_END,
      EventType.TOOL_CALL_START,
      EventType.TOOL_CALL_ARGS,
      EventType.TOOL_CALL_START,
      EventType.TOOL_CALL_ARGS,
      EventType.TOOL_CALL_END,
      EventType.TOOL_CALL_END,
    ])
    expect(events.slice(-2)).toMatchObject([{ toolCallId: 'call_a' }, { toolCallId: 'call_b' }])
    expect(error).toMatchObject({ code: 'MODEL_ERROR' })
  })

  it('a cancel stops before the next chunk, closes what is open, then throws RunCancelled', async () => {
    const controller = new AbortController()
    const { events, error } = await translate(
      chunks([text('a'), start('0', 'deploy', 'call_x'), args('0', '{}'), text('never')], (index) => {
        if (index === 1) controller.abort()
      }),
      { signal: controller.signal },
    )
    expect(events.map((e) => e.type)).toEqual([
      EventType.TEXT_MESSAGE_START,
      EventType.TEXT_MESSAGE_CONTENT,
      EventType.TEXT_MESSAGE_END,
      EventType.TOOL_CALL_START,
      EventType.TOOL_CALL_END,
    ])
    expect(error).toBeInstanceOf(RunCancelled)
  })

  it('a stream that fails after a cancel is a cancel, not a model error', async () => {
    const controller = new AbortController()
    const failing = async function* (): AsyncGenerator<ModelChunk> {
      yield text('a')
      controller.abort()
      throw new Error('aborted by the provider')
    }
    const { error } = await translate(failing(), { signal: controller.signal })
    expect(error).toBeInstanceOf(RunCancelled)
  })
})

describe('modelTools', () => {
  it("offers the agent's tools, then the client's browser tools; an agent tool keeps its name", () => {
    const validators = new ValidatorCache()
    const agent = resolveAgent(
      {
        model: scriptedModel(() => ({})),
        tools: [
          defineTool({ name: 'deploy', description: 'server', parameters: { type: 'object' }, execute: () => 1 }),
        ],
      },
      validators,
    )
    expect(
      modelTools(agent, [
        { name: 'deploy', description: 'client copy', parameters: { type: 'object' } },
        { name: 'pick_color', description: 'browser', parameters: undefined as never },
      ]),
    ).toEqual([
      { name: 'deploy', description: 'server', parameters: { type: 'object' } },
      { name: 'pick_color', description: 'browser', parameters: { type: 'object' } },
    ])
  })
})
