// @vitest-environment jsdom
/**
 * Approvals from anywhere, client side (docs/client-contract.md#decided-elsewhere), against the real
 * agent server on 127.0.0.1 (SQLite in a temp dir), hooks inside <StrictMode>: a decision made
 * elsewhere arrives live, a local resume that loses ends without recovery, deadlines (`deny`,
 * `keep`), stop right after resume, and browser calls settled once. Nothing is mocked; a test
 * only wraps fetch to hold a request back (the network being slow) or to watch the requests.
 */
import { defineTool, scriptedModel, threadKey } from '@interlude/agent-server'
import type { AgentDefinition, RunningServer } from '@interlude/agent-server'
import { InterludeError } from '@interlude/protocol'
import { act, waitFor } from '@testing-library/react'
import { describe, expect, it } from 'vitest'
import type { PendingInterruptBatch } from './core/types.ts'
import {
  answers,
  count,
  decideViaApi,
  gatedFetch,
  mount,
  newThread,
  pause,
  serve,
  serverSnapshot,
  textOf,
} from './test-utils/approvals-kit.tsx'
import { codeOf } from './test-utils/runtime-setup.ts'

describe('decided elsewhere, live', () => {
  it('a manager approves through the API: the open page drops the batch, shows who decided and streams the continuation once', async () => {
    const server = await serve()
    const threadId = newThread()
    const { result } = mount(server, { threadId })
    const batch = await pause(result)
    const loading: boolean[] = []
    const unsubscribe = result.current.runtime.subscribe(() =>
      loading.push(result.current.runtime.getSnapshot().isLoading),
    )

    await decideViaApi(server, threadId, answers(batch.interrupts, true))
    await waitFor(() => expect(result.current.pendingInterrupts).toBeUndefined())
    await waitFor(() => expect(result.current.isLoading).toBe(false))
    unsubscribe()
    expect(loading).toContain(true) // the joined continuation was a run in progress here
    expect(result.current).toMatchObject({
      error: undefined,
      isResuming: false,
      recovery: { required: false },
      lastDecision: { decidedBy: 'mgr', via: 'api', threadId, interruptIds: batch.interrupts.map((i) => i.id) },
    })
    expect(result.current.decisions).toHaveLength(1)
    const text = textOf(result.current.messages)
    expect(count(text, 'All steps ran.')).toBe(1)
    // The page's history equals the server's (no duplicated or missing text).
    expect(textOf(result.current.messages)).toBe(textOf((await serverSnapshot(server, threadId)).messages))
    // Forms bound to the old batch are retired: answering it is a typed STALE_BATCH.
    expect(codeOf(() => result.current.resume({ batchId: batch.id, entries: answers(batch.interrupts, true) }))).toBe(
      'STALE_BATCH',
    )
    // The composer works afterwards on the same thread.
    await act(() => result.current.sendMessage('hello'))
    expect(result.current.error).toBeUndefined()
  })

  it('a local resume that loses to a decision made elsewhere ends without recovery and says who decided', async () => {
    const server = await serve()
    const threadId = newThread()
    // The page's follow stream is slow (held back): it learns of the manager's decision only later.
    const gated = gatedFetch((url) => url.includes('follow=1'))
    const { result } = mount(server, { threadId, fetch: gated.fetch })
    const batch = await pause(result)
    await decideViaApi(server, threadId, answers(batch.interrupts, true))

    act(() => void result.current.resume({ batchId: batch.id, entries: answers(batch.interrupts, false) }))
    await waitFor(() => expect(result.current.isResuming).toBe(false))
    expect(result.current.error?.code).toBe('DECISION_CONFLICT')
    expect(result.current.recovery.required).toBe(false)

    gated.release()
    await waitFor(() => expect(result.current.pendingInterrupts).toBeUndefined())
    await waitFor(() => expect(result.current.isLoading).toBe(false))
    expect(result.current.recovery.required).toBe(false)
    expect(result.current.lastDecision).toMatchObject({ decidedBy: 'mgr', via: 'api' })
    expect(count(textOf(result.current.messages), 'All steps ran.')).toBe(1)
  })

  it('follow: false keeps the old behaviour: no follow request, a decision elsewhere is learnt only on answering', async () => {
    const server = await serve()
    const threadId = newThread()
    const gated = gatedFetch(() => false)
    const { result } = mount(server, { threadId, fetch: gated.fetch, follow: false })
    const batch = await pause(result)
    await decideViaApi(server, threadId, answers(batch.interrupts, true))
    await waitFor(async () => expect((await serverSnapshot(server, threadId)).status).toBe('idle'))
    // The decision is done on the server; this page did not follow, so it still shows the batch.
    expect(result.current.pendingInterrupts).toBe(batch)
    expect(gated.urls.filter((u) => u.includes('follow=1'))).toEqual([])
  })
})

describe('deadlines in the client', () => {
  it('deny: the system decision arrives like any other and the composer works afterwards', async () => {
    const server = await serve({ interruptTtlSeconds: 1, expirySweepMs: 50 })
    const threadId = newThread()
    const { result } = mount(server, { threadId })
    await pause(result)
    await waitFor(() => expect(result.current.lastDecision?.decidedBy).toBe('system:expiry'), { timeout: 5000 })
    await waitFor(() => expect(result.current.isLoading).toBe(false))
    expect(result.current).toMatchObject({ pendingInterrupts: undefined, recovery: { required: false } })
    expect(result.current.lastDecision?.via).toBe('expiry')
    await act(() => result.current.sendMessage('hello'))
    expect(result.current.error).toBeUndefined()
  })

  it('keep: the batch is marked expired, a resolved answer is refused, the all-cancelled close continues the same thread', async () => {
    const server = await serve({ interruptTtlSeconds: 1, expirySweepMs: 50, onExpiry: 'keep' })
    const threadId = newThread()
    const { result } = mount(server, { threadId })
    const batch = await pause(result)
    expect(batch.expired).toBeFalsy()
    await waitFor(() => expect(result.current.pendingInterrupts?.expired).toBe(true), { timeout: 5000 })
    const expired = result.current.pendingInterrupts as PendingInterruptBatch
    expect(expired.interrupts).toEqual(batch.interrupts)
    expect(
      codeOf(() => result.current.resume({ batchId: expired.id, entries: answers(expired.interrupts, true) })),
    ).toBe('INTERRUPT_EXPIRED')
    await act(() =>
      result.current.resume({
        batchId: expired.id,
        entries: expired.interrupts.map((i) => ({ interruptId: i.id, status: 'cancelled' })),
      }),
    )
    expect(result.current).toMatchObject({
      threadId,
      error: undefined,
      pendingInterrupts: undefined,
      recovery: { required: false },
      lastDecision: { decidedBy: 'eng', via: 'run' },
    })
    await act(() => result.current.sendMessage('hello again'))
    expect(result.current.error).toBeUndefined()
    expect(result.current.threadId).toBe(threadId)
  })
})

describe('stop before acknowledgement', () => {
  it('"approve deploy" then Stop at once: the cancel overtakes the admission and nothing deploys', async () => {
    const server = await serve()
    const threadId = newThread()
    let cancelled!: () => void
    const cancelDone = new Promise<void>((resolve) => (cancelled = resolve))
    // The resume request is slow on the network: it reaches the server only after the cancel did.
    const fetchImpl: typeof fetch = async (input, init) => {
      const url = String(input)
      if (url.endsWith('/runs') && typeof init?.body === 'string' && init.body.includes('"resume"')) {
        await cancelDone
        const { signal: _ignored, ...sent } = init // the bytes are on their way: the abort cannot recall them
        return globalThis.fetch(input, sent)
      }
      const res = await globalThis.fetch(input, init)
      if (url.endsWith('/cancel')) cancelled()
      return res
    }
    const { result } = mount(server, { threadId, fetch: fetchImpl })
    const batch = await pause(result)
    act(() => void result.current.resume({ batchId: batch.id, entries: answers(batch.interrupts, true) }))
    await waitFor(() => expect(result.current.connection).toBe('connecting'))
    const runId = result.current.runId
    act(() => result.current.stop())
    expect(result.current).toMatchObject({ isResuming: false, recovery: { required: false } })

    // The server admitted the resume after the cancel: it ran as cancelled. The page follows the
    // thread, so it learns that its own decision was recorded and the batch is gone.
    await waitFor(() => expect(result.current.pendingInterrupts).toBeUndefined())
    await waitFor(() => expect(result.current.isLoading).toBe(false))
    expect(result.current.lastDecision).toMatchObject({ runId, decidedBy: 'eng' })
    const state = (await serverSnapshot(server, threadId)).state as { releases: unknown[]; deployments: unknown[] }
    expect(state.deployments).toEqual([])
    expect(state.releases).toEqual([])
    expect(result.current.recovery.required).toBe(false)
  })
})

describe('browser tools', () => {
  /** The model calls the browser tool `locate` (and, for "deploy", the approval-gated `deploy`), then sums up. */
  function browserAgent(): { agent: AgentDefinition; deploys: { count: number } } {
    const deploys = { count: 0 }
    const deploy = defineTool({
      name: 'deploy',
      description: 'Deploy',
      parameters: { type: 'object' },
      approval: 'always',
      execute: () => `deployed #${++deploys.count}`,
    })
    const model = scriptedModel((request) => {
      const last = request.messages.findLastIndex((m) => m.role === 'user')
      const results = request.messages.slice(last + 1).filter((m) => m.role === 'tool')
      if (results.length > 0) return { text: `done: ${results.map((r) => String(r.content)).join(' | ')}` }
      const wants = String(request.messages[last]?.content ?? '')
      return {
        toolCalls: [{ name: 'locate', args: {} }, ...(wants.includes('deploy') ? [{ name: 'deploy', args: {} }] : [])],
      }
    })
    return { agent: { model, tools: [deploy], initialState: () => ({}) }, deploys }
  }

  const locate = (ran: string[], who: string) => ({
    name: 'locate',
    description: 'Where the browser is',
    parameters: { type: 'object' },
    handler: () => (ran.push(who), `here (${who})`),
  })

  it('a response with a browser call and an approval completes: approve, then the saved browser call is settled once', async () => {
    const { agent, deploys } = browserAgent()
    const server = await serve({ agent })
    const ran: string[] = []
    const { result } = mount(server, { threadId: newThread(), tools: [locate(ran, 'tab')] })
    const batch = await pause(result, 'deploy please')
    expect(ran).toEqual([]) // a pausing run executes nothing
    await act(() => result.current.resume({ batchId: batch.id, entries: answers(batch.interrupts, true) }))
    expect(deploys.count).toBe(1)
    // The resumed run waits for the saved browser call: offered here, never run on its own.
    expect(ran).toEqual([])
    expect(result.current.pendingToolCalls.map((c) => c.toolName)).toEqual(['locate'])
    await act(() => result.current.settleToolCalls({ run: true }))
    expect(ran).toEqual(['tab'])
    expect(result.current.error).toBeUndefined()
    expect(result.current.pendingToolCalls).toEqual([])
    expect(textOf(result.current.messages)).toMatch(/done: deployed #1 \| here \(tab\)/)
  })

  it('after a reload, a pending browser call is offered in every tab and runs in exactly one', async () => {
    const { agent } = browserAgent()
    const server = await serve({ agent })
    const threadId = newThread()
    // The tab that asked has no handler (it reloaded before it could run it).
    const first = mount(server, { threadId, tools: [{ name: 'locate', description: 'Where the browser is' }] })
    await act(() => first.result.current.sendMessage('where am I?'))
    expect(first.result.current.pendingToolCalls.map((c) => c.toolName)).toEqual(['locate'])

    const ran: string[] = []
    const tabB = mount(server, { threadId, tools: [locate(ran, 'B')] })
    const tabC = mount(server, { threadId, tools: [locate(ran, 'C')] })
    await act(async () => void (await tabB.result.current.recover()))
    await act(async () => void (await tabC.result.current.recover()))
    expect(tabB.result.current.pendingToolCalls).toHaveLength(1)
    expect(tabC.result.current.pendingToolCalls).toHaveLength(1)

    await act(() => tabB.result.current.settleToolCalls({ run: true }))
    expect(tabB.result.current.error).toBeUndefined()
    expect(textOf(tabB.result.current.messages)).toContain('done: here (B)')

    await act(() => tabC.result.current.settleToolCalls({ run: true }))
    expect(tabC.result.current.error?.code).toBe('TOOL_RESULTS_ALREADY_SUBMITTED')
    expect(ran).toEqual(['B'])
    await act(async () => void (await tabC.result.current.recover()))
    expect(textOf(tabC.result.current.messages)).toContain('done: here (B)')
    expect(tabC.result.current.pendingToolCalls).toEqual([])
  })

  it('a pending browser call can be reported unavailable instead of run', async () => {
    const { agent } = browserAgent()
    const server = await serve({ agent })
    const threadId = newThread()
    const first = mount(server, { threadId, tools: [{ name: 'locate', description: 'Where the browser is' }] })
    await act(() => first.result.current.sendMessage('where am I?'))
    await act(() => first.result.current.settleToolCalls({ run: false }))
    expect(first.result.current.error).toBeUndefined()
    expect(textOf(first.result.current.messages)).toMatch(/done: .*unavailable/)
  })
})

describe('unknown effects', () => {
  /** What a process killed while `deploy` ran leaves in the store: the run running with an ended lease, the call started. */
  async function deadRun(server: RunningServer, threadId: string) {
    const { store } = server
    const runId = 'run-dead'
    const now = Date.now()
    await store.startInputRun({
      threadId: threadKey('eng', threadId),
      ownerId: 'eng',
      runId,
      parentRunId: undefined,
      expectedRevision: null,
      initialState: {},
      messages: [{ id: 'u1', role: 'user', content: 'deploy please' }],
      toolResults: [],
      now,
      executorId: 'exec-dead',
      leaseUntil: now - 1,
    })
    await store.appendEvents(threadKey('eng', threadId), runId, [
      { type: 'RUN_STARTED', json: JSON.stringify({ type: 'RUN_STARTED', threadId, runId }) },
    ])
    const call = { id: 'call_deploy', type: 'function' as const, function: { name: 'deploy', arguments: '{}' } }
    await store.appendMessages(threadKey('eng', threadId), runId, [{ id: 'a1', role: 'assistant', toolCalls: [call] }])
    await store.insertToolCalls([
      {
        threadId: threadKey('eng', threadId),
        toolCallId: call.id,
        runId,
        messageId: 'a1',
        toolName: 'deploy',
        argsText: '{}',
        kind: 'server',
        status: 'pending',
        now,
      },
    ])
    await store.beginEffect(threadKey('eng', threadId), call.id, runId, now)
  }

  it('an unknown effect is shown as unknown and reconciled by hand, never re-run', async () => {
    const deploys = { count: 0 }
    const deploy = defineTool({
      name: 'deploy',
      description: 'Deploy',
      parameters: { type: 'object' },
      execute: () => ++deploys.count,
    })
    const server = await serve({
      agent: { model: scriptedModel(() => ({ text: 'ok' })), tools: [deploy] },
      exclusive: false,
    })
    const threadId = newThread()
    await deadRun(server, threadId)
    // First touch: the server continues the dead run (docs/architecture.md, "Durable continuation"): the started
    // call becomes unknown. Wait until that continuation has ended.
    for (let i = 0; i < 200 && (await serverSnapshot(server, threadId)).status !== 'idle'; i++)
      await new Promise((r) => setTimeout(r, 25))
    const { result } = mount(server, { threadId })
    await act(async () => void (await result.current.recover()))
    expect(result.current.unsettledEffects).toEqual([
      { toolCallId: 'call_deploy', toolName: 'deploy', status: 'unknown' },
    ])

    await act(() =>
      result.current.reconcileEffect({ toolCallId: 'call_deploy', outcome: 'succeeded', result: { ok: true } }),
    )
    expect(result.current.unsettledEffects).toBeUndefined()
    expect(deploys.count).toBe(0)
    // The server agrees (a reload shows no unknown effect), and a different answer now is refused, typed.
    await act(async () => void (await result.current.recover()))
    expect(result.current.unsettledEffects).toBeUndefined()
    let refused: unknown
    await act(async () => {
      refused = await result.current
        .reconcileEffect({ toolCallId: 'call_deploy', outcome: 'failed' })
        .catch((e: unknown) => e)
    })
    expect(InterludeError.isInstance(refused) && refused.code).toBe('EFFECT_NOT_UNKNOWN')
  })
})
