import { describe, expect, it } from 'vitest'
import { EventType, GUARDRAIL_INTERRUPT_REASON } from '@interlude/protocol'
import type { AgentDefinition } from '../agent/agent.ts'
import type { GuardrailDefinition } from '../agent/guardrail.ts'
import { defineTool } from '../agent/tool.ts'
import { scriptedModel } from '../models/scripted.ts'
import { postDecision } from '../test-utils/decisions.ts'
import {
  interruptsOf,
  newThreadId,
  resumeInput,
  runInput,
  textOf,
  toolResults,
  userMessage,
} from '../test-utils/harness.ts'
import { serversPerTest } from '../test-utils/in-process.ts'
import { recordingModel } from '../test-utils/recording-model.ts'
import { resolved } from '../test-utils/resume-entries.ts'
import { commandAgent } from '../test-utils/test-agents.ts'
import { guardrailEvents } from '../test-utils/guardrail-events.ts'

/**
 * Guardrail checks and what a failure does (docs/guardrails.md), through the real server (`app.request`, SQLite):
 * fail closed, `onFail: 'fail'` and `'retry'`, input guardrails, and a guardrail's own deciders.
 */

const server = serversPerTest()

let ran = 0
const touch = defineTool({
  name: 'touch',
  description: 'touch',
  parameters: { type: 'object', properties: { n: { type: 'integer' } } },
  execute: () => ({ touched: ++ran }),
})
const small: GuardrailDefinition<{ n?: number }> = {
  name: 'small',
  on: 'args',
  check: ({ n = 0 }) => (n < 10 ? { pass: true } : { pass: false, reason: 'n must be below 10' }),
}
const call = (n: number) => JSON.stringify({ text: 'touching', toolCalls: [{ name: 'touch', args: { n } }] })

describe('fail closed', () => {
  it('a throwing args check: RUN_ERROR GUARDRAIL_FAILED, the call never runs, no raw text reaches the client', async () => {
    const boom: GuardrailDefinition = {
      name: 'boom',
      on: 'args',
      check: () => {
        throw new Error('secret stack text')
      },
    }
    const s = await server({ agent: commandAgent([touch], { guardrails: [boom] }) })
    const before = ran
    const run = await s.postRun(runInput(newThreadId(), [userMessage(call(1))]))
    expect(run.events.at(-1)).toMatchObject({ type: EventType.RUN_ERROR, code: 'GUARDRAIL_FAILED' })
    expect(JSON.stringify(run.events)).not.toContain('secret stack text')
    expect(guardrailEvents(run.events)).toEqual([
      expect.objectContaining({ name: 'boom', pass: false, action: 'fail' }),
    ])
    expect(ran).toBe(before)
    expect(s.logged.some((l) => l.message.includes('guardrail boom threw'))).toBe(true)
  })

  it('a throwing output check: GUARDRAIL_FAILED and the text never joins the history', async () => {
    const boom: GuardrailDefinition = {
      name: 'boom',
      on: 'output',
      check: () => Promise.reject(new Error('nope')),
    }
    const s = await server({ agent: commandAgent([], { guardrails: [boom] }) })
    const threadId = newThreadId()
    const run = await s.postRun(runInput(threadId, [userMessage(JSON.stringify({ text: 'hidden words' }))]))
    expect(run.events.at(-1)).toMatchObject({ type: EventType.RUN_ERROR, code: 'GUARDRAIL_FAILED' })
    const snap = (await (await s.request(`/threads/${threadId}`)).json()) as { messages: { role: string }[] }
    expect(snap.messages.map((m) => m.role)).toEqual(['user'])
  })

  it("a check that answers nothing usable fails closed too; onFail 'fail' ends the run with its reason", async () => {
    const odd = { name: 'odd', on: 'args', check: () => ({ pass: 'yes' }) } as unknown as GuardrailDefinition
    const s = await server({ agent: commandAgent([touch], { guardrails: [odd] }) })
    const run = await s.postRun(runInput(newThreadId(), [userMessage(call(1))]))
    expect(run.events.at(-1)).toMatchObject({ type: EventType.RUN_ERROR, code: 'GUARDRAIL_FAILED' })
    const strict = await server({ agent: commandAgent([touch], { guardrails: [{ ...small, onFail: 'fail' }] }) })
    const failed = await strict.postRun(runInput(newThreadId(), [userMessage(call(12))]))
    expect(failed.events.at(-1)).toMatchObject({
      type: EventType.RUN_ERROR,
      code: 'GUARDRAIL_FAILED',
      message: 'The guardrail "small" failed: n must be below 10',
    })
  })
})

describe("onFail: 'retry'", () => {
  it('args: the call is rejected with the reason and the model calls again; past maxRetries a person is asked', async () => {
    const retrying = { ...small, onFail: 'retry' as const, maxRetries: 1 }
    const model = recordingModel(scriptedModel(() => ({ text: 't', toolCalls: [{ name: 'touch', args: { n: 50 } }] })))
    const s = await server({ agent: commandAgent([touch], { guardrails: [retrying], model }) })
    const run = await s.postRun(runInput(newThreadId(), [userMessage('go')]))
    const [first] = toolResults(run.events)
    expect(first!.content).toMatchObject({ status: 'error', error: expect.stringContaining('n must be below 10') })
    expect(guardrailEvents(run.events).map((e) => e.action)).toEqual(['retry', 'human'])
    expect(interruptsOf(run.events)).toMatchObject([{ reason: GUARDRAIL_INTERRUPT_REASON }])
    expect(model.requests).toHaveLength(2)
  })

  it('output: the failed answer is dropped, the model is asked again with the reason and answers anew', async () => {
    const clean: GuardrailDefinition<string> = {
      name: 'clean',
      on: 'output',
      onFail: 'retry',
      check: (text) => (text.includes('rude') ? { pass: false, reason: 'be polite' } : { pass: true }),
    }
    const model = recordingModel(
      scriptedModel((request) => ({
        text: JSON.stringify(request.messages).includes('be polite') ? 'a polite answer' : 'a rude answer',
      })),
    )
    const s = await server({ agent: commandAgent([], { guardrails: [clean], model }) })
    const threadId = newThreadId()
    const run = await s.postRun(runInput(threadId, [userMessage('hi')]))
    expect(run.events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: 'success' } })
    const snap = (await (await s.request(`/threads/${threadId}`)).json()) as { messages: { content?: string }[] }
    expect(snap.messages.map((m) => m.content)).toEqual(['hi', 'a polite answer'])
    expect(model.requests).toHaveLength(2)
  })
})

describe('input guardrails', () => {
  const noDrop: GuardrailDefinition<string> = {
    name: 'no-drop',
    on: 'input',
    check: (text) => (/drop table/i.test(text) ? { pass: false, reason: 'looks like SQL' } : { pass: true }),
  }
  const agent = (): AgentDefinition => commandAgent([], { guardrails: [noDrop] })

  it('a stopped message pauses before any model call; block ends the run with guardrail_blocked', async () => {
    const model = recordingModel(scriptedModel(() => ({ text: 'answered' })))
    const s = await server({ agent: { ...agent(), model } })
    const threadId = newThreadId()
    const run = await s.postRun(runInput(threadId, [userMessage('please DROP TABLE users')]))
    const [interrupt] = interruptsOf(run.events)
    expect(interrupt!.metadata).toMatchObject({ guardrail: 'no-drop', on: 'input', content: 'please DROP TABLE users' })
    expect(model.requests).toHaveLength(0)
    const done = await s.postRun(resumeInput(threadId, [resolved(interrupt!, { action: 'block' })]))
    expect(done.events.at(-1)).toMatchObject({ outcome: { type: 'success', reason: 'guardrail_blocked' } })
    expect(textOf(done.events)).toMatch(/^Your message was not passed on/)
    expect(model.requests).toHaveLength(0)
  })

  it('allowed, the model answers', async () => {
    const s = await server({ agent: agent() })
    const threadId = newThreadId()
    const run = await s.postRun(runInput(threadId, [userMessage(JSON.stringify({ text: 'drop table ok' }))]))
    const done = await s.postRun(resumeInput(threadId, [resolved(interruptsOf(run.events)[0]!, { action: 'allow' })]))
    expect(textOf(done.events)).toBe('drop table ok')
  })
})

describe("a guardrail's own approvers", () => {
  it('only the compliance group decides its interrupts (the owner does not); the decision is recorded', async () => {
    const compliance = { ...small, approvers: ['mgr'] }
    const s = await server({ agent: commandAgent([touch], { guardrails: [compliance] }), approvers: ['mgr'] })
    const threadId = newThreadId()
    const run = await s.postRun(runInput(threadId, [userMessage(call(20))]), { principal: 'eng' })
    const [interrupt] = interruptsOf(run.events)
    const entry = { interruptId: interrupt!.id, status: 'resolved' as const, payload: { action: 'block' } }
    // Refused like a stranger (docs/approvals.md#who-may-decide): nothing is decided.
    const own = await postDecision(s, threadId, { runId: 'run_own', resume: [entry] }, 'eng')
    expect(own.status).toBe(404)
    expect((await s.request(`/threads/${threadId}/runs/run_own`, { principal: 'eng' })).status).toBe(404)
    const ok = await postDecision(
      s,
      threadId,
      { runId: 'run_mgr', resume: [entry] },
      { principal: 'mgr', owner: 'eng' },
    )
    expect(ok.status).toBe(202)
    const view = await s.request(`/threads/${threadId}/runs/run_mgr`, { principal: 'mgr', owner: 'eng' })
    expect(((await view.json()) as { decision?: { decidedBy: string } }).decision?.decidedBy).toBe('mgr')
  })
})
