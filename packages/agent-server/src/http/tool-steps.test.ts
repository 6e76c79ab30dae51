import { afterAll, beforeAll, describe, expect, it } from 'vitest'
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
import { commandAgent } from '../test-utils/test-agents.ts'
import { resolved } from '../test-utils/resume-entries.ts'

/**
 * `ctx.step` (docs/approvals.md#memoised-steps): a step's result is stored the first time and returned on every
 * re-execution of the call without running it again; the state the tool changed is committed with it. Real HTTP
 * server, real SQLite file.
 */

async function withAgent(agent: AgentDefinition, body: (server: TestServer) => Promise<void>): Promise<void> {
  const server = await startTestServer({ agent })
  try {
    await body(server)
  } finally {
    await server.dispose()
  }
}

const YES = { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] } as const

describe('ctx.step', () => {
  it('runs each step once over three executions; occurrences of one name are distinct steps', async () => {
    const runs: string[] = []
    const stepping = defineTool<Record<string, unknown>, { log: string[] }>({
      name: 'stepping',
      description: 'steps around two questions',
      parameters: { type: 'object' },
      execute: async (_args, ctx) => {
        const a = await ctx.step('count', () => {
          runs.push('a')
          return { n: runs.length }
        })
        const b = await ctx.step('count', () => {
          runs.push('b')
          return { n: runs.length }
        })
        await ctx.interrupt({ message: 'One?', responseSchema: YES })
        const c = await ctx.step('after-one', () => {
          runs.push('c')
          return undefined
        })
        await ctx.interrupt({ message: 'Two?', responseSchema: YES })
        return { a, b, c }
      },
    }) as ToolDefinition
    await withAgent(commandAgent([stepping]), async (server) => {
      const threadId = newThreadId()
      const call = JSON.stringify({ toolCalls: [{ name: 'stepping', args: {} }] })
      const [one] = interruptsOf((await postRun(server, runInput(threadId, [userMessage(call)]))).events)
      const [two] = interruptsOf((await postRun(server, resumeInput(threadId, [resolved(one!, { ok: true })]))).events)
      expect(two).toMatchObject({ message: 'Two?' })
      const done = await postRun(server, resumeInput(threadId, [resolved(two!, { ok: true })]))
      expect(toolResults(done.events)[0]!.content).toEqual({ a: { n: 1 }, b: { n: 2 }, c: null })
      expect(runs).toEqual(['a', 'b', 'c'])
    })
  })

  it('commits the state the tool changed with the step: it survives the pause, and is not applied twice', async () => {
    const stepping = defineTool<Record<string, unknown>, { log: string[] }>({
      name: 'stepping',
      description: 'a stateful step before a question',
      parameters: { type: 'object' },
      execute: async (_args, ctx) => {
        await ctx.step('mark', () => ctx.updateState((s) => ({ ...s, log: [...s.log, 'marked'] })))
        const { ok } = await ctx.interrupt<{ ok: boolean }>({ message: 'Go?', responseSchema: YES })
        return { ok }
      },
    }) as ToolDefinition
    await withAgent(commandAgent([stepping]), async (server) => {
      const threadId = newThreadId()
      const call = JSON.stringify({ toolCalls: [{ name: 'stepping', args: {} }] })
      const [go] = interruptsOf((await postRun(server, runInput(threadId, [userMessage(call)]))).events)
      expect((parsedState(server.dbPath, threadId) as { log: string[] }).log).toEqual(['marked'])
      await postRun(server, resumeInput(threadId, [resolved(go!, { ok: false })]))
      expect((parsedState(server.dbPath, threadId) as { log: string[] }).log).toEqual(['marked'])
    })
  })

  it('a step whose result is not JSON fails the call, with a result the model can read', async () => {
    const bad = defineTool({
      name: 'bad',
      description: 'returns a function from a step',
      parameters: { type: 'object' },
      execute: async (_args, ctx) => ctx.step('fn', () => () => 1),
    }) as ToolDefinition
    await withAgent(commandAgent([bad]), async (server) => {
      const threadId = newThreadId()
      const call = JSON.stringify({ toolCalls: [{ name: 'bad', args: {} }] })
      const run = await postRun(server, runInput(threadId, [userMessage(call)]))
      expect(toolResults(run.events)[0]!.content).toMatchObject({ status: 'error' })
    })
  })
})

describe('the demo rollback: a snapshot step before two questions', () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startTestServer()
  })
  afterAll(async () => {
    await server.dispose()
  })

  it('"rollback v3 carefully": one snapshot over both questions, named in the second', async () => {
    const threadId = newThreadId()
    const [first] = interruptsOf(
      (await postRun(server, runInput(threadId, [userMessage('rollback v3 carefully')]))).events,
    )
    expect(first?.message).toMatch(/^Roll back v3\?/)
    const paused = parsedState(server.dbPath, threadId) as ReleaseState
    expect(paused.snapshots).toHaveLength(1)
    const next = await postRun(server, resumeInput(threadId, [resolved(first!, { confirm: true })]))
    const [second] = interruptsOf(next.events)
    expect(second?.metadata).toMatchObject({ snapshotId: paused.snapshots![0]!.snapshotId })
    await postRun(server, resumeInput(threadId, [resolved(second!, { confirm: true })]))
    const state = parsedState(server.dbPath, threadId) as ReleaseState
    expect(state.snapshots).toEqual(paused.snapshots)
    expect(state.rollbacks).toHaveLength(1)
  })
})
