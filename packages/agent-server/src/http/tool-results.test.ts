import { afterEach, describe, expect, it } from 'vitest'
import { EventType } from '@interlude/protocol'
import type { ThreadListPage, ThreadSnapshot } from '@interlude/protocol'
import { defineTool } from '../agent/tool.ts'
import {
  dumpStore,
  interruptsOf,
  newThreadId,
  parsedState,
  resumeInput,
  runInput,
  textOf,
  toolResults,
  types,
  userMessage,
} from '../test-utils/harness.ts'
import type { InProcessServer } from '../test-utils/in-process.ts'
import { startInProcess } from '../test-utils/in-process.ts'
import { commandAgent } from '../test-utils/test-agents.ts'
import { threadKey } from '../store/thread-key.ts'

let server: InProcessServer | undefined
afterEach(async () => {
  await server?.dispose()
  server = undefined
})

const command = (value: unknown) => userMessage(JSON.stringify(value))

function ledger(dbPath: string, threadId: string): { tool_name: string; status: string; result: string | null }[] {
  return (
    dumpStore(dbPath).tool_calls as {
      thread_id: string
      tool_name: string
      status: string
      result: string | null
      created_at: number
    }[]
  )
    .filter((row) => row.thread_id === threadKey('alice', threadId))
    .map(({ tool_name, status, result }) => ({ tool_name, status, result }))
    .sort((a, b) => a.tool_name.localeCompare(b.tool_name))
}

describe('tool results and state that JSON cannot hold (B3)', () => {
  it('big (BigInt), circ (circular), badstate (function / BigInt state): failed results the model reads, normal terminal events, nothing cancelled', async () => {
    const ran: string[] = []
    const logged: string[] = []
    const tools = [
      defineTool({
        name: 'big',
        description: 'x',
        parameters: { type: 'object' },
        execute: () => {
          ran.push('big')
          return 10n
        },
      }),
      defineTool({
        name: 'circ',
        description: 'x',
        parameters: { type: 'object' },
        execute: () => {
          ran.push('circ')
          const o: Record<string, unknown> = {}
          o.o = o
          return o
        },
      }),
      defineTool({
        name: 'badstate',
        description: 'x',
        parameters: { type: 'object' },
        execute: (_args, ctx) => {
          ran.push('badstate')
          ctx.updateState((s) => ({ ...(s as object), n: 1n, f: () => 1 }))
          return 'ok'
        },
      }),
      defineTool({
        name: 'fnstate',
        description: 'x',
        parameters: { type: 'object' },
        execute: (_args, ctx) => {
          ran.push('fnstate')
          ctx.updateState(() => ({ log: [], f: () => 1 }))
          return 'ok'
        },
      }),
      defineTool({ name: 'fine', description: 'x', parameters: { type: 'object' }, execute: () => ({ ok: true }) }),
    ]
    server = await startInProcess({ agent: commandAgent(tools), logError: (message) => logged.push(message) })
    const expected = {
      big: 'Tool returned a value that is not JSON.',
      circ: 'Tool returned a value that is not JSON.',
      badstate: 'Tool set a state that is not JSON.',
      fnstate: 'Tool set a state that is not JSON.',
    }
    for (const [name, error] of Object.entries(expected)) {
      const threadId = newThreadId()
      const res = await server.postRun(
        runInput(threadId, [
          command({
            toolCalls: [
              { name, args: {} },
              { name: 'fine', args: {} },
            ],
          }),
        ]),
      )
      expect(res.status).toBe(200)
      const last = res.events[res.events.length - 1] as { type: string; outcome?: { type: string } }
      expect(last.type).toBe(EventType.RUN_FINISHED)
      expect(last.outcome?.type).toBe('success')
      expect(types(res.events)).not.toContain(EventType.RUN_ERROR)
      const results = toolResults(res.events)
      expect(results.map((r) => r.content)).toEqual([{ status: 'error', error }, { ok: true }])
      // The model read the error and answered normally.
      expect(textOf(res.events)).toBe(`done: {"status":"error","error":"${error}"} | {"ok":true}`)
      expect(ledger(server.dbPath, threadId)).toEqual(
        [
          { tool_name: name, status: 'failed', result: JSON.stringify({ status: 'error', error }) },
          { tool_name: 'fine', status: 'succeeded', result: '{"ok":true}' },
        ].sort((a, b) => a.tool_name.localeCompare(b.tool_name)),
      )
      // The state change of a failed call is discarded.
      expect(parsedState(server.dbPath, threadId)).toEqual({ log: [] })
      // The thread stays usable.
      const next = await server.postRun(runInput(threadId, [userMessage('{"text":"again"}')]))
      expect(textOf(next.events)).toBe('again')
    }
    expect(ran).toEqual(['big', 'circ', 'badstate', 'fnstate'])
    expect(logged).toEqual([
      'tool big returned a value that is not JSON',
      'tool circ returned a value that is not JSON',
      'tool badstate set a state that is not JSON',
      'tool fnstate set a state that is not JSON',
    ])
  })

  it('after an approval: a non-JSON result is a failed call, never "cancelled, did not run"', async () => {
    const ran: string[] = []
    const tool = defineTool({
      name: 'big',
      description: 'x',
      parameters: { type: 'object' },
      approval: 'always',
      execute: () => {
        ran.push('big')
        return { n: 10n }
      },
    })
    server = await startInProcess({ agent: commandAgent([tool]) })
    const threadId = newThreadId()
    const paused = await server.postRun(runInput(threadId, [command({ toolCalls: [{ name: 'big', args: {} }] })]))
    const [interrupt] = interruptsOf(paused.events)
    const resumed = await server.postRun(
      resumeInput(threadId, [{ interruptId: interrupt!.id, status: 'resolved', payload: { approved: true } }]),
    )
    expect(types(resumed.events)).not.toContain(EventType.RUN_ERROR)
    expect(toolResults(resumed.events)).toEqual([
      {
        toolCallId: interrupt!.toolCallId,
        content: { status: 'error', error: 'Tool returned a value that is not JSON.' },
      },
    ])
    expect(ledger(server.dbPath, threadId).map((r) => r.status)).toEqual(['failed'])
    expect(ran).toEqual(['big'])
  })
})

describe('interrupt expiry (B6)', () => {
  it('every interrupt of a batch has the same expiresAt, equal to the stored batch expiry (snapshot and inbox agree)', async () => {
    // A clock that moves on every read: separate reads per interrupt would disagree.
    let clock = Date.parse('2030-01-01T00:00:00.000Z')
    const now = () => (clock += 7)
    const ask = (name: string) =>
      defineTool({ name, description: 'x', parameters: { type: 'object' }, approval: 'always', execute: () => name })
    const slow = defineTool({ name: 'slow', description: 'x', parameters: { type: 'object' }, execute: () => 'done' })
    server = await startInProcess({
      agent: commandAgent([ask('a'), slow, ask('b'), ask('c')]),
      now,
      interruptTtlSeconds: 60,
    })
    const threadId = newThreadId()
    const calls = ['a', 'slow', 'b', 'c'].map((name) => ({ name, args: {} }))
    const paused = await server.postRun(runInput(threadId, [command({ toolCalls: calls })]))
    const interrupts = interruptsOf(paused.events)
    expect(interrupts).toHaveLength(3)
    const expiries = new Set(interrupts.map((i) => i.expiresAt))
    expect(expiries.size).toBe(1)

    const batch = await server.store.getOpenBatch(threadKey('alice', threadId))
    const batchExpiry = new Date(batch!.expiresAt).toISOString()
    expect([...expiries]).toEqual([batchExpiry])
    expect(new Set(batch!.interrupts.map((i) => i.interrupt.expiresAt))).toEqual(new Set([batchExpiry]))

    const snapshot = (await (await server.request(`/threads/${threadId}`)).json()) as ThreadSnapshot
    expect(snapshot.interrupts!.map((i) => i.expiresAt)).toEqual([batchExpiry, batchExpiry, batchExpiry])
    const inbox = (await (await server.request('/threads?status=interrupted')).json()) as ThreadListPage
    const row = inbox.threads.find((t) => t.threadId === threadId)
    expect(row!.interrupts!.map((i) => i.expiresAt)).toEqual([batchExpiry, batchExpiry, batchExpiry])
  })
})
