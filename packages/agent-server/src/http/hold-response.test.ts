import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Interrupt } from '@interlude/protocol'
import type { AgentDefinition } from '../agent/agent.ts'
import { defineTool } from '../agent/tool.ts'
import type { ToolDefinition } from '../agent/tool.ts'
import type { ReleaseState } from '../demo/release-assistant.ts'
import type { TestServer } from '../test-utils/harness.ts'
import {
  interruptsOf,
  newThreadId,
  parsedState,
  postRun,
  resumeInput,
  runInput,
  startTestServer,
  toolResults,
  userMessage,
} from '../test-utils/harness.ts'
import { commandAgent, loggingTool } from '../test-utils/test-agents.ts'
import { resolved } from '../test-utils/resume-entries.ts'

/**
 * Hold the whole response (docs/decisions.md#a-turn-keeps-its-promises): while a call of a model response waits for a
 * person, no other call of that response runs; after the decision they all run in the model's order. Real HTTP
 * server, real SQLite file, the demo agent ("check the changelog and deploy …") and small command agents.
 */

const CHECK_AND_DEPLOY = 'check the changelog and deploy v2.1 to staging'

async function pausedCheckAndDeploy(server: TestServer): Promise<{ threadId: string; deploy: Interrupt }> {
  const threadId = newThreadId()
  const run = await postRun(server, runInput(threadId, [userMessage(CHECK_AND_DEPLOY)]))
  expect(run.status).toBe(200)
  const interrupts = interruptsOf(run.events)
  expect(interrupts.map((i) => i.metadata?.toolName)).toEqual(['deploy'])
  // Nothing of the response ran: no result was streamed, the check is not in the state.
  expect(toolResults(run.events)).toEqual([])
  return { threadId, deploy: interrupts[0]! }
}

describe('hold the whole response: the demo agent (default pausePolicy)', () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startTestServer()
  })
  afterAll(async () => {
    await server.dispose()
  })
  const state = (threadId: string) => parsedState(server.dbPath, threadId) as ReleaseState

  it('"check the changelog and deploy v2.1 to staging": no check while paused; approved, one check then one deploy', async () => {
    const { threadId, deploy } = await pausedCheckAndDeploy(server)
    expect(state(threadId).changelogChecks ?? []).toEqual([])
    const done = await postRun(server, resumeInput(threadId, [resolved(deploy)]))
    expect(done.status).toBe(200)
    const results = toolResults(done.events)
    // The model's order: check_changelog was the first call of the response, deploy the second.
    expect(results.map((r) => r.toolCallId)).toEqual([expect.any(String), deploy.toolCallId])
    expect(results[0]!.content).toMatchObject({ checked: 'v2.1' })
    const after = state(threadId)
    expect(after.changelogChecks).toEqual([{ version: 'v2.1', toolCallId: results[0]!.toolCallId }])
    expect(after.deployments).toEqual([{ operationId: deploy.toolCallId, version: 'v2.1', environment: 'staging' }])
  })

  it('denied: the held check still runs, once; nothing is deployed', async () => {
    const { threadId, deploy } = await pausedCheckAndDeploy(server)
    const done = await postRun(server, resumeInput(threadId, [resolved(deploy, { approved: false, reason: 'no' })]))
    expect(done.status).toBe(200)
    const results = toolResults(done.events)
    expect(results[0]!.content).toMatchObject({ checked: 'v2.1' })
    expect(results[1]).toEqual({ toolCallId: deploy.toolCallId, content: { status: 'denied', reason: 'no' } })
    expect(state(threadId).changelogChecks).toHaveLength(1)
    expect(state(threadId).deployments).toEqual([])
  })

  it('20 concurrent approvals: one continuation, the check once, the deploy once', async () => {
    const { threadId, deploy } = await pausedCheckAndDeploy(server)
    const inputs = Array.from({ length: 20 }, () => resumeInput(threadId, [resolved(deploy)]))
    const responses = await Promise.all(inputs.map((input) => postRun(server, input)))
    const winners = responses.filter((r) => r.status === 200)
    expect(winners).toHaveLength(1)
    for (const r of responses) if (r.status !== 200) expect(r.error?.code).toBe('ALREADY_RESUMED')
    expect(state(threadId).changelogChecks).toHaveLength(1)
    expect(state(threadId).deployments).toHaveLength(1)
  })

  it('a batch cancelled as a whole abandons the turn: the held check never runs', async () => {
    const { threadId, deploy } = await pausedCheckAndDeploy(server)
    const done = await postRun(server, resumeInput(threadId, [{ interruptId: deploy.id, status: 'cancelled' }]))
    expect(done.status).toBe(200)
    const results = toolResults(done.events)
    expect(results).toHaveLength(2)
    expect(results[0]!.content).toMatchObject({ status: 'cancelled' })
    expect(state(threadId).changelogChecks ?? []).toEqual([])
  })
})

const asking = defineTool<Record<string, unknown>, { log: string[] }>({
  name: 'asking',
  description: 'asks from inside execute',
  parameters: { type: 'object' },
  execute: async (_args, ctx) => {
    const answer = await ctx.interrupt<{ ok: boolean }>({
      message: 'Go on?',
      responseSchema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] },
    })
    ctx.updateState((s) => ({ ...s, log: [...s.log, 'asking'] }))
    return { ok: answer.ok }
  },
}) as ToolDefinition

const command = (calls: string[]) =>
  JSON.stringify({ toolCalls: calls.map((name) => ({ name, args: {} })), text: 'plan' })

async function withAgent(agent: AgentDefinition, body: (server: TestServer) => Promise<void>): Promise<void> {
  const server = await startTestServer({ agent })
  try {
    await body(server)
  } finally {
    await server.dispose()
  }
}

describe('hold the whole response: policies and questions from inside tools', () => {
  const tools = [loggingTool('first'), loggingTool('gated', { approval: 'always' }), loggingTool('last'), asking]

  it("'run-free-calls' (opt-in) runs the free calls before the pause, as before", async () => {
    await withAgent(commandAgent(tools, { pausePolicy: 'run-free-calls' }), async (server) => {
      const threadId = newThreadId()
      const run = await postRun(server, runInput(threadId, [userMessage(command(['first', 'gated', 'last']))]))
      const [gated] = interruptsOf(run.events)
      expect((parsedState(server.dbPath, threadId) as { log: string[] }).log).toEqual(['first', 'last'])
      await postRun(server, resumeInput(threadId, [resolved(gated!)]))
      expect((parsedState(server.dbPath, threadId) as { log: string[] }).log).toEqual(['first', 'last', 'gated'])
    })
  })

  it("'hold': nothing before the decision, then every call in the model's order", async () => {
    await withAgent(commandAgent(tools), async (server) => {
      const threadId = newThreadId()
      const run = await postRun(server, runInput(threadId, [userMessage(command(['first', 'gated', 'last']))]))
      const [gated] = interruptsOf(run.events)
      expect((parsedState(server.dbPath, threadId) as { log: string[] }).log).toEqual([])
      await postRun(server, resumeInput(threadId, [resolved(gated!)]))
      expect((parsedState(server.dbPath, threadId) as { log: string[] }).log).toEqual(['first', 'gated', 'last'])
    })
  })

  it('a question from inside a tool: the calls before it have run, the calls after it wait for the answer', async () => {
    await withAgent(commandAgent(tools), async (server) => {
      const threadId = newThreadId()
      const run = await postRun(server, runInput(threadId, [userMessage(command(['first', 'asking', 'last']))]))
      const [question] = interruptsOf(run.events)
      expect(question).toMatchObject({ message: 'Go on?' })
      expect((parsedState(server.dbPath, threadId) as { log: string[] }).log).toEqual(['first'])
      const done = await postRun(server, resumeInput(threadId, [resolved(question!, { ok: true })]))
      expect(done.status).toBe(200)
      expect((parsedState(server.dbPath, threadId) as { log: string[] }).log).toEqual(['first', 'asking', 'last'])
    })
  })
})
