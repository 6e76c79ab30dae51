import { afterEach, describe, expect, it } from 'vitest'
import { EventType, SYSTEM_EXPIRY_PRINCIPAL } from '@interlude/protocol'
import type { ThreadSnapshot } from '@interlude/protocol'
import { ThreadSnapshotSchema } from '@interlude/protocol/schemas'
import type { AgentDefinition } from '../agent/agent.ts'
import type { ToolDefinition } from '../agent/tool.ts'
import type { Store } from '../store/store.ts'
import { decisionHashSync } from '../core/decision-hash.ts'
import { interruptsOf, newThreadId, runInput, textOf, toolResults, types, userMessage } from '../test-utils/harness.ts'
import type { InProcessOptions, InProcessServer } from '../test-utils/in-process.ts'
import { startInProcess } from '../test-utils/in-process.ts'
import { commandAgent } from '../test-utils/test-agents.ts'
import { threadKey } from '../store/thread-key.ts'

/**
 * Restart semantics without killing a process: the database state a dead process leaves behind is
 * written through the store (a run whose lease ended, an effect left `started`, an open text
 * message), then the server meets it on first touch or at startup and continues it (docs/architecture.md,
 * "Durable continuation"). The real SIGKILL cases are in `src/http/crash-recovery.test.ts` and
 * `src/http/kill9-continuation.test.ts`.
 */
const servers: InProcessServer[] = []
afterEach(async () => {
  for (const s of servers.splice(0)) await s.dispose()
})

async function serve(agent: AgentDefinition, extra: InProcessOptions = {}) {
  const s = await startInProcess({ agent, exclusive: false, ...extra })
  servers.push(s)
  return s
}

const deployTool = (reconcile?: ToolDefinition['reconcile']): ToolDefinition => ({
  name: 'deploy',
  description: 'deploy',
  parameters: { type: 'object' },
  execute: () => ({ deployed: true }),
  ...(reconcile ? { reconcile } : {}),
})

const snapshotOf = async (s: InProcessServer, threadId: string) => {
  const res = await s.request(`/threads/${threadId}`)
  expect(res.status).toBe(200)
  return ThreadSnapshotSchema.parse(await res.json()) as ThreadSnapshot
}

const eventsOf = async (s: InProcessServer, threadId: string) => (await s.threadEvents(threadId)).events

/**
 * What a process killed in the middle of a run leaves: the run `running` with a lease that ends at
 * `leaseUntil`, a model response with two calls (one started, one not), an open text message.
 */
async function deadRun(store: Store, threadId: string, leaseUntil = Date.now() - 1) {
  const runId = 'run-dead'
  const now = Date.now()
  await store.startInputRun({
    threadId: threadKey('alice', threadId),
    ownerId: 'alice',
    runId,
    parentRunId: undefined,
    expectedRevision: null,
    initialState: { log: [] },
    messages: [userMessage('deploy please', 'u1')],
    toolResults: [],
    now,
    executorId: 'exec-dead',
    leaseUntil,
  })
  await store.appendEvents(threadKey('alice', threadId), runId, [
    { type: EventType.RUN_STARTED, json: JSON.stringify({ type: EventType.RUN_STARTED, threadId, runId }) },
  ])
  await store.appendMessages(threadKey('alice', threadId), runId, [
    {
      id: 'a1',
      role: 'assistant',
      toolCalls: [
        { id: 'call_deploy', type: 'function', function: { name: 'deploy', arguments: '{}' } },
        { id: 'call_later', type: 'function', function: { name: 'deploy', arguments: '{}' } },
      ],
    },
  ])
  await store.insertToolCalls(
    ['call_deploy', 'call_later'].map((toolCallId) => ({
      threadId: threadKey('alice', threadId),
      toolCallId,
      runId,
      messageId: 'a1',
      toolName: 'deploy',
      argsText: '{}',
      kind: 'server' as const,
      status: 'pending' as const,
      now,
    })),
  )
  expect(await store.beginEffect(threadKey('alice', threadId), 'call_deploy', runId, now)).toBe('started')
  await store.appendEvents(threadKey('alice', threadId), runId, [
    {
      type: EventType.TEXT_MESSAGE_START,
      json: JSON.stringify({ type: EventType.TEXT_MESSAGE_START, messageId: 'm-open', role: 'assistant' }),
    },
    {
      type: EventType.TEXT_MESSAGE_CONTENT,
      json: JSON.stringify({ type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'm-open', delta: '部署中 🚀' }),
    },
  ])
  return runId
}

describe('restart semantics: runs whose process died are continued', () => {
  it('on first touch: continued in the same run — the started effect is unknown (never re-run), the call that never started runs once, the model is called again', async () => {
    const executed: string[] = []
    const tool: ToolDefinition = { ...deployTool(), execute: (_args, ctx) => executed.push(ctx.toolCallId) }
    const s = await serve(commandAgent([tool]))
    const threadId = newThreadId()
    await deadRun(s.store, threadId)

    // The replay is a touch: it starts the continuation and tails it to its end.
    const events = await eventsOf(s, threadId)
    // Consecutive content chunks counted once (the scripted model streams word by word).
    expect(
      events.map((e) => e.type).filter((t, i, all) => t !== EventType.TEXT_MESSAGE_CONTENT || all[i - 1] !== t),
    ).toEqual([
      EventType.RUN_STARTED,
      EventType.TEXT_MESSAGE_START,
      EventType.TEXT_MESSAGE_CONTENT,
      EventType.TEXT_MESSAGE_END,
      EventType.TOOL_CALL_RESULT,
      EventType.TOOL_CALL_RESULT,
      EventType.TEXT_MESSAGE_START,
      EventType.TEXT_MESSAGE_CONTENT,
      EventType.TEXT_MESSAGE_END,
      EventType.RUN_FINISHED,
    ])
    expect(executed).toEqual(['call_later'])
    const snapshot = await snapshotOf(s, threadId)
    expect(snapshot).toMatchObject({
      status: 'idle',
      unsettledEffects: [{ toolCallId: 'call_deploy', toolName: 'deploy', status: 'unknown' }],
    })
    expect(snapshot.activeRunId).toBeUndefined()
    const results = snapshot.messages.filter((m) => m.role === 'tool') as { toolCallId: string; content: string }[]
    expect(JSON.parse(results.find((m) => m.toolCallId === 'call_deploy')!.content)).toMatchObject({
      status: 'unknown',
    })
    expect(JSON.parse(results.find((m) => m.toolCallId === 'call_later')!.content)).toBe(1)
    // The model read both results.
    expect(textOf(events)).toMatch(/done: .*unknown.* \| 1$/)
    expect(await s.store.getRun(threadKey('alice', threadId), 'run-dead')).toMatchObject({ status: 'succeeded' })

    // The thread goes on; nothing re-runs.
    const next = await s.postRun(runInput(threadId, [userMessage('{"text":"status?"}')]))
    expect(next.status).toBe(200)
    expect(executed).toEqual(['call_later'])
    expect((await snapshotOf(s, threadId)).unsettledEffects).toHaveLength(1)
  })

  it("the tool's reconcile(toolCallId) settles the effect with its result and state", async () => {
    const seen: string[] = []
    const tool = deployTool((toolCallId, ctx) => {
      seen.push(`${toolCallId}:${ctx.idempotencyKey}:${ctx.principal}:${ctx.runId}`)
      ctx.updateState((state) => ({ ...(state as object), reconciled: toolCallId }))
      return { status: 'succeeded', result: { deployed: true, reconciled: true } }
    })
    const s = await serve(commandAgent([tool]))
    const threadId = newThreadId()
    await deadRun(s.store, threadId)
    const events = await eventsOf(s, threadId)
    expect(events.map((e) => e.type)).toContain(EventType.STATE_SNAPSHOT)
    expect(events[events.length - 1]).toMatchObject({ type: EventType.RUN_FINISHED })
    const snapshot = await snapshotOf(s, threadId)
    expect(seen).toEqual(['call_deploy:call_deploy:alice:run-dead'])
    expect(snapshot.unsettledEffects).toBeUndefined()
    expect(snapshot.state).toEqual({ log: [], reconciled: 'call_deploy' })
    const deployResult = snapshot.messages.find((m) => m.role === 'tool' && m.toolCallId === 'call_deploy') as {
      content: string
    }
    expect(JSON.parse(deployResult.content)).toEqual({ deployed: true, reconciled: true })
    expect(await s.store.getToolCall(threadKey('alice', threadId), 'call_deploy')).toMatchObject({
      status: 'succeeded',
    })
  })

  it('a reconcile that cannot tell (undefined or throws) leaves the effect unknown', async () => {
    const s = await serve(
      commandAgent([
        deployTool(() => {
          throw new Error('ops API down')
        }),
      ]),
    )
    const threadId = newThreadId()
    await deadRun(s.store, threadId)
    await eventsOf(s, threadId)
    expect((await snapshotOf(s, threadId)).unsettledEffects).toEqual([
      { toolCallId: 'call_deploy', toolName: 'deploy', status: 'unknown' },
    ])
  })

  it('a run whose lease has not ended is alive: not touched until the lease ends', async () => {
    const s = await serve(commandAgent([deployTool()]))
    const threadId = newThreadId()
    const leaseUntil = Date.now() + 400
    await deadRun(s.store, threadId, leaseUntil)
    const busy = await s.postRun(runInput(threadId, [userMessage('{"text":"x"}')]))
    expect(busy.error?.code).toBe('THREAD_BUSY')
    expect((await snapshotOf(s, threadId)).status).toBe('running')
    while (Date.now() <= leaseUntil) await new Promise((r) => setTimeout(r, 20))
    // First touch by a new run: the abandoned run is continued here; the input waits for it (THREAD_BUSY, retryable).
    const during = await s.postRun(runInput(threadId, [userMessage('{"text":"after"}')]))
    expect(during.error?.code).toBe('THREAD_BUSY')
    await eventsOf(s, threadId)
    const admitted = await s.postRun(runInput(threadId, [userMessage('{"text":"after"}')]))
    expect(admitted.status).toBe(200)
    expect(textOf(admitted.events)).toBe('after')
  })

  it('a cancel of an abandoned run stops its continuation: the calls that never started did not run', async () => {
    const executed: string[] = []
    const tool: ToolDefinition = { ...deployTool(), execute: (_args, ctx) => executed.push(ctx.toolCallId) }
    const s = await serve(commandAgent([tool]))
    const threadId = newThreadId()
    const runId = await deadRun(s.store, threadId)
    const res = await s.request(`/threads/${threadId}/runs/${runId}/cancel`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{}',
    })
    expect(res.status).toBeLessThan(300)
    const events = await eventsOf(s, threadId)
    expect(events[events.length - 1]).toMatchObject({ type: EventType.RUN_FINISHED })
    expect((await s.store.getRun(threadKey('alice', threadId), runId))?.status).toMatch(/^(cancelled|succeeded)$/)
    // At most once, whichever stop point the cancel met.
    expect(executed.length).toBeLessThanOrEqual(1)
  })

  it('exclusive mode (single process): every run left running is continued at startup, lease or not', async () => {
    const first = await serve(commandAgent([deployTool()]))
    const threadId = newThreadId()
    await deadRun(first.store, threadId, Date.now() + 3_600_000)
    await first.close()
    // Same file, new process, exclusive: taken over before the first request.
    const second = await startInProcess({ agent: commandAgent([deployTool()]), dbPath: first.dbPath, exclusive: true })
    servers.push(second)
    await eventsOf(second, threadId)
    expect(await second.store.getRun(threadKey('alice', threadId), 'run-dead')).toMatchObject({ status: 'succeeded' })
    expect(await second.store.getThread(threadKey('alice', threadId))).toMatchObject({ status: 'idle' })
  })

  it('a live tail of an abandoned run sees its continuation to the end', async () => {
    const s = await serve(commandAgent([deployTool()]), { runLeaseMs: 200 })
    const threadId = newThreadId()
    await deadRun(s.store, threadId, Date.now() + 300)
    // The events route is a touch too, but the lease is still valid: it tails until the sweep continues the run.
    const events = await eventsOf(s, threadId)
    expect(types(events)).toContain(EventType.RUN_FINISHED)
    expect(types(events)).not.toContain(EventType.RUN_ERROR)
    expect(
      toolResults(events)
        .map((r) => r.toolCallId)
        .sort(),
    ).toEqual(['call_deploy', 'call_later'])
  })

  it("an expiry sweep's continuation whose process died is continued and closes its batch as expired", async () => {
    const executed: string[] = []
    const tool: ToolDefinition = {
      ...deployTool(),
      approval: 'always',
      execute: (_args, ctx) => executed.push(ctx.toolCallId),
    }
    const s = await serve(commandAgent([tool]), { expirySweepMs: 0 })
    const threadId = newThreadId()
    const paused = await s.postRun(
      runInput(threadId, [userMessage(JSON.stringify({ toolCalls: [{ name: 'deploy', args: {} }] }))]),
    )
    const [interrupt] = interruptsOf(paused.events)
    const batch = (await s.store.getOpenBatch(threadKey('alice', threadId)))!
    // What a sweep that decided the batch (deny) and then died leaves: the claim, its record, a running run.
    const decision = [{ interruptId: interrupt!.id, status: 'resolved' as const, payload: { approved: false } }]
    const claimed = await s.store.claimBatch({
      threadId: threadKey('alice', threadId),
      batchId: batch.batchId,
      runId: 'run-expiry-dead',
      decisionHash: decisionHashSync(decision),
      decision,
      now: Date.now(),
      executorId: 'exec-dead',
      leaseUntil: Date.now() - 1,
      decidedBy: SYSTEM_EXPIRY_PRINCIPAL,
      via: 'expiry',
    })
    expect(claimed.ok).toBe(true)
    const events = await eventsOf(s, threadId)
    expect(events[events.length - 1]).toMatchObject({ type: EventType.RUN_FINISHED, runId: 'run-expiry-dead' })
    expect((await s.store.getBatchOfInterrupt(threadKey('alice', threadId), interrupt!.id))?.status).toBe('expired')
    expect(executed).toEqual([])
    const result = toolResults(events).find((r) => r.toolCallId === interrupt!.toolCallId)
    expect(result?.content).toMatchObject({ status: 'denied' })
  })
})
