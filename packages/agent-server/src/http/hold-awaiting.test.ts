/**
 * Hold the whole response while it waits for a browser tab or an external system
 * (docs/decisions.md#a-turn-keeps-its-promises): the free calls of a response with a browser or external call run
 * only once its result arrived, in the model's order; a new message closes them as not run; a browser call of a
 * response that asks a person is not offered to any tab before the decision. Over a SQLite file (with a restart) and
 * over the real PostgreSQL with two replicas (own schema per test).
 */
import { afterEach, describe, expect, it as itBase } from 'vitest'
import type { AgUiEvent, RunAgentInput, ThreadSnapshot } from '@interlude/protocol'
import { defineTool } from '../agent/tool.ts'
import { createPostgresStore } from '../store/postgres/postgres-store.ts'
import { threadKey } from '../store/thread-key.ts'
import {
  interruptsOf,
  newThreadId,
  runInput,
  tempDir,
  textOf,
  toolResults,
  userMessage,
} from '../test-utils/harness.ts'
import type { InProcessServer } from '../test-utils/in-process.ts'
import { startInProcess } from '../test-utils/in-process.ts'
import { createTestSchema, PG_URL, pgAvailable, TEST_POOLS } from '../test-utils/pg.ts'
import { resolved } from '../test-utils/resume-entries.ts'
import { commandAgent, loggingTool } from '../test-utils/test-agents.ts'

const pg = await pgAvailable('held calls on PostgreSQL')
const cleanups: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

type Backend = 'SQLite' | 'PostgreSQL'
type Log = { log: string[] }

const browserTools = [{ name: 'pick_color', description: 'Ask the browser', parameters: { type: 'object' } }]
const command = (names: string[]) =>
  userMessage(JSON.stringify({ toolCalls: names.map((name) => ({ name, args: {} })), text: 'plan' }))

interface Served {
  readonly s: InProcessServer
  /** A second replica over the same PostgreSQL schema; on SQLite, a server restarted on the same file. */
  readonly other: () => Promise<InProcessServer>
  readonly dispatched: string[]
}

async function serve(backend: Backend): Promise<Served> {
  const dispatched: string[] = []
  const notify = defineTool({
    name: 'notify',
    description: 'Page the on-call engineer',
    parameters: { type: 'object' },
    external: true,
    execute: (_args, ctx) => {
      dispatched.push(ctx.idempotencyKey)
    },
  })
  const agent = commandAgent([
    loggingTool('first'),
    loggingTool('gated', { approval: 'always' }),
    loggingTool('last'),
    notify,
  ])
  if (backend === 'SQLite') {
    const tmp = tempDir()
    cleanups.push(async () => tmp.cleanup())
    const s = await startInProcess({ agent, dbPath: tmp.dbPath })
    let running = true
    cleanups.push(async () => {
      if (running) await s.dispose()
    })
    const other = async () => {
      running = false
      await s.dispose()
      const restarted = await startInProcess({ agent, dbPath: s.dbPath })
      cleanups.push(() => restarted.dispose())
      return restarted
    }
    return { s, other, dispatched }
  }
  const { schema, drop } = await createTestSchema()
  cleanups.push(drop)
  const replica = async () => {
    const r = await startInProcess({
      agent,
      exclusive: false,
      store: await createPostgresStore({ connectionString: PG_URL, schema, ...TEST_POOLS }),
    })
    cleanups.push(() => r.dispose())
    return r
  }
  return { s: await replica(), other: replica, dispatched }
}

const finished = (events: readonly AgUiEvent[]) =>
  events.at(-1) as { type: string; outcome?: { type: string; pendingToolCallIds?: string[] } }

async function logOf(s: InProcessServer, threadId: string): Promise<string[]> {
  const snapshot = (await (await s.request(`/threads/${threadId}`)).json()) as ThreadSnapshot
  return ((snapshot.state as Log | undefined)?.log ?? []).slice()
}

const claim = (s: InProcessServer, threadId: string, toolCallId: string, claimId: string) =>
  s.request(`/threads/${threadId}/tool-calls/${toolCallId}/claim`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ claimId }),
  })

const browserResult = (threadId: string, toolCallId: string, content: string, claimId: string): RunAgentInput =>
  runInput(threadId, [{ id: `tm-${content}`, role: 'tool', toolCallId, content }], {
    tools: browserTools,
    forwardedProps: { interlude: { claimId } },
  })

describe.each(['SQLite', 'PostgreSQL'] as const)('hold the whole response for awaited results (%s)', (backend) => {
  const it = backend === 'PostgreSQL' && !pg ? itBase.skip : itBase

  it("a browser call holds its response's free calls; its result runs them in the model's order", async () => {
    const { s, other } = await serve(backend)
    const threadId = newThreadId()
    const first = await s.postRun(
      runInput(threadId, [command(['first', 'pick_color', 'last'])], { tools: browserTools }),
    )
    expect(first.status).toBe(200)
    const pending = finished(first.events).outcome?.pendingToolCallIds ?? []
    expect(pending).toHaveLength(1)
    // Nothing of the response ran while the browser call waits.
    expect(toolResults(first.events)).toEqual([])
    expect(await logOf(s, threadId)).toEqual([])

    // The result arrives at the other replica (or after a restart): the held calls run there, once, in order.
    const next = await other()
    expect((await claim(next, threadId, pending[0]!, 'tab-a')).status).toBe(200)
    const done = await next.postRun(browserResult(threadId, pending[0]!, 'blue', 'tab-a'))
    expect(done.status).toBe(200)
    expect(toolResults(done.events).map((r) => r.content)).toEqual([{ ran: 'first' }, { ran: 'last' }])
    expect(finished(done.events).outcome?.type).toBe('success')
    expect(textOf(done.events)).toContain('blue')
    expect(await logOf(next, threadId)).toEqual(['first', 'last'])
  })

  it('a new message overtakes the awaited call: the held calls are closed as not run', async () => {
    const { s } = await serve(backend)
    const threadId = newThreadId()
    const first = await s.postRun(
      runInput(threadId, [command(['first', 'pick_color', 'last'])], { tools: browserTools }),
    )
    const [browserCallId] = finished(first.events).outcome?.pendingToolCallIds ?? []
    const overtaken = await s.postRun(runInput(threadId, [userMessage('never mind')], { tools: browserTools }))
    expect(overtaken.status).toBe(200)
    expect(finished(overtaken.events).outcome?.type).toBe('success')
    expect(await logOf(s, threadId)).toEqual([])
    const calls = await s.store.listToolCalls(threadKey('alice', threadId), {})
    expect(calls.map((c) => [c.toolName, c.status])).toEqual([
      ['first', 'cancelled'],
      ['pick_color', 'cancelled'],
      ['last', 'cancelled'],
    ])
    const held = calls.find((c) => c.toolName === 'first')!
    expect(JSON.parse(held.result!)).toMatchObject({
      status: 'cancelled',
      message: expect.stringMatching(/did not run/),
    })
    // The browser call can no longer be claimed; a late result is refused and runs nothing.
    expect((await claim(s, threadId, browserCallId!, 'tab-a')).status).toBe(409)
    expect(await logOf(s, threadId)).toEqual([])
  })

  it('an external call is dispatched at once; the free calls wait for its result', async () => {
    const { s, other, dispatched } = await serve(backend)
    const threadId = newThreadId()
    const first = await s.postRun(runInput(threadId, [command(['first', 'notify', 'last'])]))
    const pending = finished(first.events).outcome?.pendingToolCallIds ?? []
    expect(pending).toHaveLength(1)
    expect(dispatched).toEqual(pending)
    expect(await logOf(s, threadId)).toEqual([])
    const next = await other()
    const done = await next.postRun(
      runInput(threadId, [{ id: 'r1', role: 'tool', toolCallId: pending[0]!, content: '{"paged":"ana"}' }]),
    )
    expect(done.status).toBe(200)
    expect(await logOf(next, threadId)).toEqual(['first', 'last'])
    expect(dispatched).toHaveLength(1)
  })

  it('a browser call of a response that asks a person is not offered before the decision', async () => {
    const { s, other } = await serve(backend)
    const threadId = newThreadId()
    const first = await s.postRun(
      runInput(threadId, [command(['first', 'gated', 'pick_color', 'last'])], { tools: browserTools }),
    )
    const [gated] = interruptsOf(first.events)
    expect(gated?.metadata?.toolName).toBe('gated')
    const browserCallId = (await s.store.listToolCalls(threadKey('alice', threadId), {})).find(
      (c) => c.toolName === 'pick_color',
    )!.toolCallId
    const early = await claim(s, threadId, browserCallId, 'tab-a')
    expect(early.status).toBe(409)
    expect(((await early.json()) as { error: { code: string } }).error.code).toBe('INTERRUPTS_PENDING')

    const next = await other()
    const decided = await next.postRun(runInput(threadId, [], { resume: [resolved(gated!)], tools: browserTools }))
    expect(decided.status).toBe(200)
    // After the decision every call of the response goes on in the model's order; the browser call is offered now.
    expect(finished(decided.events).outcome).toMatchObject({ type: 'success', pendingToolCallIds: [browserCallId] })
    expect(await logOf(next, threadId)).toEqual(['first', 'gated', 'last'])
    expect((await claim(next, threadId, browserCallId, 'tab-a')).status).toBe(200)
    const done = await next.postRun(browserResult(threadId, browserCallId, 'green', 'tab-a'))
    expect(textOf(done.events)).toContain('green')
    expect(await logOf(next, threadId)).toEqual(['first', 'gated', 'last'])
  })
})

describe("pausePolicy 'run-free-calls'", () => {
  itBase('runs the free calls of a response with a browser call at once, as before', async () => {
    const s = await startInProcess({
      agent: commandAgent([loggingTool('first'), loggingTool('last')], { pausePolicy: 'run-free-calls' }),
    })
    cleanups.push(() => s.dispose())
    const threadId = newThreadId()
    const first = await s.postRun(
      runInput(threadId, [command(['first', 'pick_color', 'last'])], { tools: browserTools }),
    )
    expect(finished(first.events).outcome?.pendingToolCallIds).toHaveLength(1)
    expect(await logOf(s, threadId)).toEqual(['first', 'last'])
  })
})
