import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { EventType } from '@interlude/protocol'
import type { AgUiEvent, RunAgentInput } from '@interlude/protocol'
import type { AgentDefinition } from '../../agent/agent.ts'
import { resolveAgent } from '../../agent/agent.ts'
import { defineTool } from '../../agent/tool.ts'
import { ValidatorCache } from '../../schema/validator-cache.ts'
import { createSqliteStore } from '../../store/sqlite/sqlite-store.ts'
import type { Store } from '../../store/store.ts'
import {
  interruptsOf,
  newThreadId,
  runInput,
  tempDir,
  textOf,
  toolResults,
  types,
  userMessage,
} from '../../test-utils/harness.ts'
import { commandAgent } from '../../test-utils/test-agents.ts'
import { admitRun } from '../admission/admission.ts'
import { DecisionRights } from '../access/decision-rights.ts'
import { isTerminal, toNewEvent } from '../ev.ts'
import { executeRun } from './execute-run.ts'
import { DEFAULT_LIMITS } from '../../config/limits.ts'

/**
 * The turn loop on its own: admission hands a plan to `executeRun`, which runs against a real
 * SQLite store with a scripted model. No server, no run manager: the test plays the log writer
 * (`persistEmitted`) and records, for every row the run writes, which events were still unwritten.
 */
const tmp = tempDir()
let store: Store
const clock = { now: Date.parse('2030-01-01T00:00:00.000Z') }
const now = () => clock.now

beforeAll(() => {
  store = createSqliteStore(tmp.dbPath)
})
afterAll(async () => {
  await store.close()
  tmp.cleanup()
})

/** The row writes of a run (`Store` methods); everything else passes through unrecorded. */
const ROW_WRITES = new Set(['appendMessages', 'insertToolCalls', 'beginEffect', 'settleToolCall', 'createBatch'])

interface Driven {
  readonly events: AgUiEvent[]
  /** `event <TYPE>`, `persist`, `row <method>` in the order they happened. */
  readonly journal: string[]
  /** Row writes that happened while emitted events were not yet durable (must stay empty). */
  readonly early: { row: string; unwritten: string[] }[]
  readonly logged: string[]
}

async function drive(
  definition: AgentDefinition,
  input: RunAgentInput,
  options: { signal?: AbortSignal; maxInterruptsPerBatch?: number } = {},
): Promise<Driven> {
  const validators = new ValidatorCache()
  const agent = resolveAgent(definition, validators)
  const admitted = await admitRun(
    {
      store,
      agent,
      validators,
      now,
      limits: DEFAULT_LIMITS,
      lease: () => ({ executorId: 'exec-test', leaseUntil: now() + 60_000 }),
      recoverThread: async (thread) => thread,
      rights: new DecisionRights({ store, tools: agent.tools, logError: () => undefined }),
    },
    'alice',
    input,
  )
  if (admitted.kind !== 'start') throw new Error('expected a new run')
  const driven: Driven = { events: [], journal: [], early: [], logged: [] }
  let unwritten: AgUiEvent[] = []
  const journaled = new Proxy(store, {
    get(target, property: string) {
      const value = Reflect.get(target, property) as unknown
      if (typeof value !== 'function') return value
      const method = (value as (...args: unknown[]) => unknown).bind(target)
      if (!ROW_WRITES.has(property)) return method
      return (...args: unknown[]) => {
        driven.journal.push(`row ${property}`)
        if (unwritten.length > 0) driven.early.push({ row: property, unwritten: types(unwritten) })
        return method(...args)
      }
    },
  })
  for await (const event of executeRun(admitted.plan, {
    agent,
    store: journaled,
    validators,
    now,
    interruptTtlMs: 600_000,
    maxInterruptsPerBatch: options.maxInterruptsPerBatch ?? 16,
    maxToolArgumentBytes: DEFAULT_LIMITS.maxToolArgumentBytes,
    signal: options.signal ?? new AbortController().signal,
    persistEmitted: async () => {
      driven.journal.push('persist')
      const batch = unwritten
      unwritten = []
      if (batch.length > 0) await store.appendEvents(input.threadId, input.runId, batch.map(toNewEvent))
    },
    logError: (message) => driven.logged.push(message),
  })) {
    driven.journal.push(`event ${event.type}`)
    driven.events.push(event)
    if (!isTerminal(event.type)) unwritten.push(event)
  }
  return driven
}

const command = (value: unknown) => userMessage(JSON.stringify(value))
const last = (events: readonly AgUiEvent[]) => events[events.length - 1]

describe('the turn loop', () => {
  it('a text answer: its events are durable before the assistant message is stored', async () => {
    const threadId = newThreadId()
    const run = await drive(commandAgent([]), runInput(threadId, [command({ text: 'hello there' })]))
    expect(types(run.events)).toEqual([
      EventType.RUN_STARTED,
      EventType.TEXT_MESSAGE_START,
      EventType.TEXT_MESSAGE_CONTENT,
      EventType.TEXT_MESSAGE_CONTENT,
      EventType.TEXT_MESSAGE_END,
      EventType.RUN_FINISHED,
    ])
    expect(run.journal.filter((j) => j.startsWith('row'))).toEqual(['row appendMessages'])
    expect(run.early).toEqual([])
    const messages = await store.listMessages(threadId)
    expect(messages[messages.length - 1]).toMatchObject({ role: 'assistant', content: 'hello there' })
  })

  it('tool calls → results → model: every row after the events before it; each result row before its event', async () => {
    const ran: unknown[] = []
    const tools = [
      defineTool({
        name: 'add',
        description: 'x',
        parameters: { type: 'object' },
        execute: (args, ctx) => {
          ran.push(args)
          ctx.updateState((state) => ({ ...(state as object), added: true }))
          return { sum: 3 }
        },
      }),
    ]
    const threadId = newThreadId()
    const run = await drive(
      commandAgent(tools),
      runInput(threadId, [
        command({
          text: 'adding',
          toolCalls: [
            { name: 'add', args: { a: 1, b: 2 } },
            { name: 'nope', args: {} },
          ],
        }),
      ]),
    )
    expect(ran).toEqual([{ a: 1, b: 2 }])
    expect(toolResults(run.events).map((r) => r.content)).toEqual([
      { sum: 3 },
      { status: 'error', error: 'Unknown tool "nope".' },
    ])
    expect(textOf(run.events)).toBe(
      'adding' + 'done: {"sum":3} | {"status":"error","error":"Unknown tool \\"nope\\"."}',
    )
    expect(run.early).toEqual([])
    const rows = run.journal.filter((j) => !j.startsWith('event') && j !== 'persist')
    expect(rows).toEqual([
      'row appendMessages',
      'row insertToolCalls',
      // The rejected call needs no effect; the other claims its effect, then settles.
      'row beginEffect',
      'row settleToolCall',
      'row settleToolCall',
      'row appendMessages',
    ])
    // A TOOL_CALL_RESULT describes a committed result: its row comes first.
    const results = run.journal.flatMap((j, i) => (j === `event ${EventType.TOOL_CALL_RESULT}` ? [i] : []))
    for (const i of results) expect(run.journal[i - 1]).toBe('row settleToolCall')
    expect(types(run.events)).toContain(EventType.STATE_SNAPSHOT)
    expect(last(run.events)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: 'success' } })
  })

  it('a decision to ask for: denials settled first, the batch stored before the interrupting RUN_FINISHED', async () => {
    const tools = [
      defineTool({
        name: 'ask',
        description: 'x',
        parameters: { type: 'object' },
        approval: 'always',
        execute: () => 1,
      }),
      defineTool({
        name: 'wipe',
        description: 'x',
        parameters: { type: 'object' },
        authorize: () => false,
        execute: () => 1,
      }),
    ]
    const threadId = newThreadId()
    const run = await drive(
      commandAgent(tools),
      runInput(threadId, [
        command({
          toolCalls: [
            { name: 'ask', args: {} },
            { name: 'wipe', args: {} },
          ],
        }),
      ]),
    )
    expect(types(run.events).slice(-4)).toEqual([
      EventType.TOOL_CALL_RESULT,
      EventType.STATE_SNAPSHOT,
      EventType.MESSAGES_SNAPSHOT,
      EventType.RUN_FINISHED,
    ])
    expect(run.early).toEqual([])
    expect(run.journal.indexOf('row createBatch')).toBeLessThan(run.journal.indexOf(`event ${EventType.RUN_FINISHED}`))
    const [interrupt] = interruptsOf(run.events)
    expect(interrupt!.expiresAt).toBe(new Date(clock.now + 600_000).toISOString())
    const batch = await store.getOpenBatch(threadId)
    expect(batch?.interrupts.map((i) => i.interrupt)).toEqual([interrupt])
    expect(await store.getToolCall(threadId, interrupt!.toolCallId!)).toMatchObject({ status: 'awaiting_decision' })
  })

  it('maxIterations with onBudget stop: RUN_FINISHED success, reason max_iterations, with a closing note', async () => {
    const again = defineTool({
      name: 'again',
      description: 'x',
      parameters: { type: 'object' },
      execute: () => 'again',
    })
    const looping: AgentDefinition = {
      ...commandAgent([again]),
      maxIterations: 2,
      onBudget: 'stop',
      model: {
        name: 'looping',
        async *stream() {
          yield { type: 'tool_call_start', id: undefined, name: 'again', key: '0' } as const
        },
      },
    }
    const run = await drive(looping, runInput(newThreadId(), [userMessage('go')]))
    expect(types(run.events).filter((t) => t === EventType.TOOL_CALL_START)).toHaveLength(2)
    expect(last(run.events)).toMatchObject({
      type: EventType.RUN_FINISHED,
      outcome: { type: 'success', reason: 'max_iterations' },
    })
    const note = run.events.find((e) => e.type === EventType.TEXT_MESSAGE_CONTENT) as { delta: string } | undefined
    expect(note?.delta).toBe('I stopped here: this run used its budget of 2 model calls without finishing.')
  })

  it('a cancel seen before a tool starts: the tool never runs, its call is closed as cancelled', async () => {
    const controller = new AbortController()
    let ran = false
    const tool = defineTool({
      name: 'slow',
      description: 'x',
      parameters: { type: 'object' },
      // The cancel arrives while the policy decides: the next stop point is the effect's claim.
      approval: () => {
        controller.abort()
        return false
      },
      execute: () => (ran = true),
    })
    const threadId = newThreadId()
    const run = await drive(
      commandAgent([tool]),
      runInput(threadId, [command({ toolCalls: [{ name: 'slow', args: {} }] })]),
      {
        signal: controller.signal,
      },
    )
    expect(ran).toBe(false)
    expect(toolResults(run.events).map((r) => r.content)).toEqual([
      { status: 'cancelled', message: 'The run was cancelled before this call ran; it did not run.' },
    ])
    expect(last(run.events)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: 'cancelled' } })
    expect(run.journal).not.toContain('row beginEffect')
    expect(run.early).toEqual([])
  })

  it('a model failure: RUN_ERROR MODEL_ERROR with a generic message; the raw error only goes to the log', async () => {
    const failing: AgentDefinition = {
      model: {
        name: 'failing',
        // eslint-disable-next-line require-yield
        async *stream() {
          throw new Error('key sk-1 rejected')
        },
      },
    }
    const run = await drive(failing, runInput(newThreadId(), [userMessage('hi')]))
    expect(run.events).toEqual([
      expect.objectContaining({ type: EventType.RUN_STARTED }),
      { type: EventType.RUN_ERROR, message: 'The model request failed.', code: 'MODEL_ERROR' },
    ])
    expect(run.logged).toHaveLength(1)
  })
})
