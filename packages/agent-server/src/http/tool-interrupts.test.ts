import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { EventType } from '@interlude/protocol'
import type { AgUiEvent, Interrupt } from '@interlude/protocol'
import { defineTool } from '../agent/tool.ts'
import type { ToolDefinition } from '../agent/tool.ts'
import { InterruptCancelledError } from '../agent/tool-interrupt.ts'
import { QUESTION_CANCELLED } from '../core/tools/effects-ledger.ts'
import { createPostgresStore } from '../store/postgres/postgres-store.ts'
import type { Store } from '../store/store.ts'
import { interruptsOf, newThreadId, resumeInput, runInput, toolResults, userMessage } from '../test-utils/harness.ts'
import type { InProcessServer } from '../test-utils/in-process.ts'
import { startInProcess } from '../test-utils/in-process.ts'
import { createTestSchema, PG_URL, pgAvailable, TEST_POOLS } from '../test-utils/pg.ts'
import { cancelled, refusedUnchanged, resolved } from '../test-utils/resume-entries.ts'
import { commandAgent } from '../test-utils/test-agents.ts'
import { threadKey } from '../store/thread-key.ts'

/** docs/approvals.md#asking-from-inside-a-tool: `ctx.interrupt` inside `execute`, over a real server and store. */

const COLOUR = {
  type: 'object',
  properties: { colour: { type: 'string', enum: ['red', 'blue'] } },
  required: ['colour'],
  additionalProperties: false,
}
const SIZE = {
  type: 'object',
  properties: { size: { type: 'integer', minimum: 1 } },
  required: ['size'],
  additionalProperties: false,
}
const NO_ARGS = { type: 'object', properties: {}, additionalProperties: false }

/** What the tools did, by call: `top` on every (re-)execution, `effect` once past the last question. */
const trace: string[] = []

const twoQuestions = defineTool<Record<string, never>, { log: string[] }>({
  name: 'two_questions',
  description: 'Asks a colour, then a size, then records both.',
  parameters: NO_ARGS,
  execute: async (_args, ctx) => {
    trace.push(`top ${ctx.toolCallId}`)
    const first = await ctx.interrupt<{ colour: string }>({
      message: 'Which colour?',
      responseSchema: COLOUR,
      metadata: { step: 1 },
    })
    const second = await ctx.interrupt<{ size: number }>({
      reason: 'input_required',
      message: `Which size for ${first.colour}?`,
      responseSchema: SIZE,
    })
    trace.push(`effect ${ctx.toolCallId}`)
    ctx.updateState((state) => ({ ...state, log: [...state.log, `${first.colour}:${second.size}`] }))
    return { colour: first.colour, size: second.size }
  },
})

const catching = defineTool({
  name: 'catching',
  description: 'Asks once and reports a cancelled question itself.',
  parameters: NO_ARGS,
  execute: async (_args, ctx) => {
    try {
      const answer = await ctx.interrupt({ reason: 'interlude:pick', message: 'Pick one', responseSchema: COLOUR })
      return { answer }
    } catch (error) {
      if (error instanceof InterruptCancelledError) return { caught: error.code, interruptId: error.interruptId }
      throw error
    }
  },
})

const uncaught = defineTool({
  name: 'uncaught',
  description: 'Asks once and does not catch a cancellation.',
  parameters: NO_ARGS,
  execute: async (_args, ctx) => {
    await ctx.interrupt({ message: 'Sure?', responseSchema: COLOUR })
    trace.push(`uncaught effect ${ctx.toolCallId}`)
    return { ran: true }
  },
})

const badReason = defineTool({
  name: 'bad_reason',
  description: 'Asks with a reason that is not allowed.',
  parameters: NO_ARGS,
  execute: async (_args, ctx) =>
    ctx.interrupt({ reason: 'tool_call' as 'confirmation', message: 'x', responseSchema: COLOUR }),
})

const TOOLS = [twoQuestions, catching, uncaught, badReason] as ToolDefinition[]
const call = (name: string) => JSON.stringify({ toolCalls: [{ name, args: {} }] })
const finished = (events: readonly AgUiEvent[]) =>
  events.find((e) => e.type === EventType.RUN_FINISHED) as { outcome?: { type: string } } | undefined

/** The flows every store must carry the same way. */
function suite(name: string, open: () => Promise<{ server: InProcessServer; dispose(): Promise<void> }>) {
  describe(name, () => {
    let server: InProcessServer
    let dispose: () => Promise<void>
    beforeAll(async () => {
      ;({ server, dispose } = await open())
    })
    afterAll(async () => {
      await dispose()
    })

    async function askedOnce(threadId: string, tool: string): Promise<Interrupt> {
      const run = await server.postRun(runInput(threadId, [userMessage(call(tool))]))
      expect(run.status).toBe(200)
      const interrupts = interruptsOf(run.events)
      expect(interrupts).toHaveLength(1)
      return interrupts[0]!
    }

    it('a tool asks twice from inside execute; the answers arrive in order and the effect runs once', async () => {
      const threadId = newThreadId()
      const first = await askedOnce(threadId, 'two_questions')
      const callId = first.toolCallId!
      expect(first).toMatchObject({
        reason: 'confirmation',
        message: 'Which colour?',
        toolCallId: callId,
        responseSchema: COLOUR,
        metadata: { step: 1, toolName: 'two_questions' },
      })
      // Not started while it waits: a crash now re-runs it, never reports it unknown.
      expect((await server.store.getToolCall(threadKey('alice', threadId), callId))?.status).toBe('awaiting_decision')

      const second = await server.postRun(resumeInput(threadId, [resolved(first, { colour: 'red' })]))
      expect(second.status).toBe(200)
      expect(finished(second.events)?.outcome?.type).toBe('interrupt')
      const [next] = interruptsOf(second.events)
      expect(next).toMatchObject({ reason: 'input_required', message: 'Which size for red?', toolCallId: callId })
      expect(toolResults(second.events)).toEqual([])
      expect((await server.store.getToolCall(threadKey('alice', threadId), callId))?.status).toBe('awaiting_decision')
      // The snapshot and the inbox show the question like any interrupt.
      const snapshot = (await (await server.request(`/threads/${threadId}`)).json()) as { interrupts: Interrupt[] }
      expect(snapshot.interrupts.map((i) => i.id)).toEqual([next!.id])

      const done = await server.postRun(resumeInput(threadId, [resolved(next!, { size: 3 })]))
      expect(done.status).toBe(200)
      expect(toolResults(done.events)).toEqual([{ toolCallId: callId, content: { colour: 'red', size: 3 } }])
      expect(finished(done.events)?.outcome?.type).toBe('success')
      const call = await server.store.getToolCall(threadKey('alice', threadId), callId)
      expect(call?.status).toBe('succeeded')
      expect((await server.store.getThread(threadKey('alice', threadId)))?.state).toEqual({ log: ['red:3'] })
      // Run from the top three times (ask 1; replay 1 and ask 2; replay both), the effect once.
      expect(trace.filter((t) => t.endsWith(callId))).toEqual([
        `top ${callId}`,
        `top ${callId}`,
        `top ${callId}`,
        `effect ${callId}`,
      ])
      // The answers are durable beside the decision records.
      const stored = JSON.parse((await server.store.getToolCheckpoint(threadKey('alice', threadId), callId))!) as {
        answers: unknown[]
      }
      expect(stored.answers).toEqual([
        { interruptId: first.id, status: 'resolved', payload: { colour: 'red' } },
        { interruptId: next!.id, status: 'resolved', payload: { size: 3 } },
      ])
    })

    it('a cancelled answer reaches the tool as InterruptCancelledError; uncaught, the call ends cancelled', async () => {
      const threadId = newThreadId()
      const asked = await askedOnce(threadId, 'catching')
      expect(asked.reason).toBe('interlude:pick')
      const caught = await server.postRun(resumeInput(threadId, [cancelled(asked)]))
      expect(caught.status).toBe(200)
      expect(toolResults(caught.events)).toEqual([
        { toolCallId: asked.toolCallId, content: { caught: 'INTERRUPT_CANCELLED', interruptId: asked.id } },
      ])
      expect((await server.store.getToolCall(threadKey('alice', threadId), asked.toolCallId!))?.status).toBe(
        'succeeded',
      )

      const other = newThreadId()
      const question = await askedOnce(other, 'uncaught')
      const ended = await server.postRun(resumeInput(other, [cancelled(question)]))
      expect(toolResults(ended.events)).toEqual([{ toolCallId: question.toolCallId, content: QUESTION_CANCELLED }])
      expect((await server.store.getToolCall(threadKey('alice', other), question.toolCallId!))?.status).toBe(
        'cancelled',
      )
      expect(trace).not.toContain(`uncaught effect ${question.toolCallId}`)
    })

    it('an answer that does not match the responseSchema is refused with a typed 4xx; the question stays open', async () => {
      const threadId = newThreadId()
      const asked = await askedOnce(threadId, 'two_questions')
      const refused = await server.postRun(resumeInput(threadId, [resolved(asked, { colour: 'green' })]))
      expect(refused.status).toBe(422)
      expect(refused.error?.code).toBe('RESUME_PAYLOAD_INVALID')
      expect((await server.store.getToolCall(threadKey('alice', threadId), asked.toolCallId!))?.status).toBe(
        'awaiting_decision',
      )
      expect(await server.store.getToolCheckpoint(threadKey('alice', threadId), asked.toolCallId!)).toMatch(
        /"answers":\[\]/,
      )
      const answered = await server.postRun(resumeInput(threadId, [resolved(asked, { colour: 'blue' })]))
      expect(interruptsOf(answered.events)[0]?.message).toBe('Which size for blue?')
    })

    it('concurrent resumes of a question admit once: identical ones get ALREADY_RESUMED, conflicting ones DECISION_CONFLICT', async () => {
      const threadId = newThreadId()
      const first = await askedOnce(threadId, 'two_questions')
      const at = await server.postRun(resumeInput(threadId, [resolved(first, { colour: 'blue' })]))
      const [second] = interruptsOf(at.events)
      const same = Array.from({ length: 4 }, () => resumeInput(threadId, [resolved(second!, { size: 2 })]))
      const conflicting = [5, 6].map((size) => resumeInput(threadId, [resolved(second!, { size })]))
      const responses = await Promise.all([...same, ...conflicting].map((input) => server.postRun(input)))
      const winners = responses.filter((r) => r.status === 200)
      expect(winners).toHaveLength(1)
      for (const r of responses)
        if (r.status !== 200) expect(['ALREADY_RESUMED', 'DECISION_CONFLICT']).toContain(r.error?.code)
      const callId = first.toolCallId!
      expect(trace.filter((t) => t === `effect ${callId}`)).toHaveLength(1)
      const state = (await server.store.getThread(threadKey('alice', threadId)))?.state as { log: string[] }
      expect(state.log).toHaveLength(1)
    })

    it('a question with a reason outside confirmation / input_required / interlude:<name> fails the call', async () => {
      const threadId = newThreadId()
      const run = await server.postRun(runInput(threadId, [userMessage(call('bad_reason'))]))
      expect(interruptsOf(run.events)).toEqual([])
      const [result] = toolResults(run.events)
      expect(result?.content).toEqual({ status: 'error', error: 'The tool bad_reason failed.' })
    })
  })
}

suite('ctx.interrupt (SQLite)', async () => {
  const server = await startInProcess({ agent: commandAgent(TOOLS) })
  return { server, dispose: () => server.dispose() }
})

const pg = await pgAvailable('ctx.interrupt on PostgreSQL')
if (pg) {
  suite('ctx.interrupt (PostgreSQL)', async () => {
    const { schema, drop } = await createTestSchema()
    const store: Store = await createPostgresStore({ connectionString: PG_URL, schema, ...TEST_POOLS })
    const server = await startInProcess({ agent: commandAgent(TOOLS), store })
    return {
      server,
      dispose: async () => {
        await server.dispose()
        await drop()
      },
    }
  })
}

describe('invalid answers change nothing (SQLite file byte-for-byte)', () => {
  it('refuses and leaves every row as it was', async () => {
    const server = await startInProcess({ agent: commandAgent(TOOLS) })
    try {
      const threadId = newThreadId()
      const run = await server.postRun(runInput(threadId, [userMessage(call('two_questions'))]))
      const [asked] = interruptsOf(run.events)
      const refused = await refusedUnchanged(server.dbPath, () =>
        server.postRun(resumeInput(threadId, [resolved(asked!, { colour: 'red', extra: 1 })])),
      )
      expect(refused.error?.code).toBe('RESUME_PAYLOAD_INVALID')
    } finally {
      await server.dispose()
    }
  })
})
