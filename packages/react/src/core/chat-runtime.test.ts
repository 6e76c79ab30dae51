import type { Interrupt } from '@interlude/protocol'
import { InterludeError } from '@interlude/protocol'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { approvalInterrupt, ControllableTransport, ev, step, tick } from '../test-utils/controllable-transport.ts'
import { ChatRuntime } from './chat-runtime.ts'
import type { ChatRuntimeOptions } from './types.ts'

const T0 = Date.parse('2030-01-01T00:00:00Z')
const runtimes: ChatRuntime[] = []
afterEach(() => {
  for (const rt of runtimes.splice(0)) rt.dispose()
})

function setup(options: Partial<ChatRuntimeOptions> = {}) {
  const transport = new ControllableTransport()
  let n = 0
  const clock = { now: T0 }
  const rt = new ChatRuntime({
    transport,
    threadId: 't1',
    generateId: () => `id-${++n}`,
    now: () => clock.now,
    retry: { attempts: 2, delayMs: () => 0 },
    reconnect: { attempts: 2, delayMs: () => 0 },
    throttleMs: 60_000, // deltas commit only on lifecycle events or an explicit flush()
    ...options,
  })
  runtimes.push(rt)
  const seen = { notifications: 0 }
  rt.subscribe(() => seen.notifications++)
  return { rt, transport, clock, seen }
}

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn()
  } catch (error) {
    if (InterludeError.isInstance(error)) return error.code
    throw error
  }
  return undefined
}

const twoApprovals = (extra: Partial<Interrupt> = {}) => [approvalInterrupt('i-1', 'call-1', extra), approvalInterrupt('i-2', 'call-2', extra)]

/** Sends a message and pauses the run with the given interrupts. */
async function pause(ctx: ReturnType<typeof setup>, interrupts: Interrupt[] = twoApprovals()) {
  const { rt, transport } = ctx
  const before = transport.runs.length
  void rt.sendMessage('deploy v2.1')
  const call = await transport.waitForRun(before + 1)
  const runId = call.input.runId
  call.channel.pushAll([
    ev.runStarted('t1', runId),
    ev.textStart('m-a'),
    ev.text('m-a', 'Plan: publish then deploy.'),
    ev.textEnd('m-a'),
    ev.toolStart('call-1', 'publish_release', 'm-a'),
    ev.toolArgs('call-1', '{"version":"v2.1"}'),
    ev.toolEnd('call-1'),
    ev.toolStart('call-2', 'deploy', 'm-a'),
    ev.toolArgs('call-2', '{"version":"v2.1","environment":"staging"}'),
    ev.toolEnd('call-2'),
    ev.stateSnapshot({ releases: [] }),
    ev.interrupted('t1', runId, interrupts),
  ])
  await step(call.channel)
  const batch = rt.getSnapshot().pendingInterrupts
  if (!batch) throw new Error('no batch published')
  return { call, batch }
}

const approveAll = (batch: { id: string; interrupts: readonly Interrupt[] }, approved = true) => ({
  batchId: batch.id,
  entries: batch.interrupts.map((i) => ({ interruptId: i.id, status: 'resolved' as const, payload: { approved } })),
})

describe('ChatRuntime: ordinary runs', () => {
  it('sends RunAgentInput and assembles streamed messages; lifecycle commits are synchronous', async () => {
    const ctx = setup({ initialState: { n: 1 }, tools: [{ name: 'pick', description: 'Pick one' }] })
    const { rt, transport } = ctx
    const done = rt.sendMessage('hello')
    expect(rt.getSnapshot()).toMatchObject({ isLoading: true, status: 'submitted', isResuming: false })
    const call = await transport.waitForRun(1)
    expect(call.input).toMatchObject({
      threadId: 't1',
      runId: 'id-2',
      state: { n: 1 },
      messages: [{ id: 'id-1', role: 'user', content: 'hello' }],
      tools: [{ name: 'pick', description: 'Pick one' }],
      context: [],
      forwardedProps: {},
    })
    expect(call.input.resume).toBeUndefined()
    call.channel.push(ev.runStarted('t1', 'id-2'))
    await step(call.channel)
    expect(rt.getSnapshot()).toMatchObject({ status: 'streaming', connection: 'open' })
    call.channel.pushAll([ev.textStart('m1'), ev.text('m1', '你好'), ev.text('m1', ' 👋🏽'), ev.textEnd('m1')])
    await step(call.channel)
    // Buffered until a lifecycle event or a flush.
    expect(rt.getSnapshot().messages).toHaveLength(1)
    rt.flush()
    expect(rt.getSnapshot().messages[1]).toEqual({ id: 'm1', role: 'assistant', content: '你好 👋🏽' })
    call.channel.push(ev.finished('t1', 'id-2'))
    await done
    expect(rt.getSnapshot()).toMatchObject({ isLoading: false, status: 'idle', error: undefined })
  })

  it('fails a run whose RUN_ERROR arrives after acknowledgement, without requiring recovery', async () => {
    const { rt, transport } = setup()
    const done = rt.sendMessage('hi')
    const call = await transport.waitForRun(1)
    call.channel.pushAll([ev.runStarted('t1', call.input.runId), ev.textStart('m1'), ev.text('m1', 'partial'), ev.runError('boom', 'MODEL_ERROR')])
    await done
    const s = rt.getSnapshot()
    expect(s.error?.code).toBe('MODEL_ERROR')
    expect(s.messages[1]).toMatchObject({ content: 'partial' })
    expect(s.recovery.required).toBe(false)
    expect(transport.runs).toHaveLength(1) // a server failure is never retried
  })

  it('fails on a RUN_STARTED that does not match the request, without retrying or reconnecting', async () => {
    const { rt, transport } = setup()
    const done = rt.sendMessage('hi')
    const call = await transport.waitForRun(1)
    call.channel.push(ev.runStarted('t1', 'someone-else'))
    await done
    expect(rt.getSnapshot().error?.code).toBe('PROTOCOL_ERROR')
    expect(transport.runs).toHaveLength(1)
    expect(transport.connects).toHaveLength(0)
  })

  it('heals a malformed frame after acknowledgement by reconnecting, but not an out-of-order event', async () => {
    const { rt, transport } = setup()
    const done = rt.sendMessage('hi')
    const call = await transport.waitForRun(1)
    const runId = call.input.runId
    call.channel.push(ev.runStarted('t1', runId), '1').fail(new InterludeError('PROTOCOL_ERROR', 'SSE frame data is not JSON.', { details: { reason: 'invalid_json' } }))
    const re = await transport.waitForConnect(1)
    re.channel.push(ev.runStarted('t1', runId), '2') // a second RUN_STARTED for the same run
    await done
    expect(rt.getSnapshot().error).toMatchObject({ code: 'PROTOCOL_ERROR', details: { reason: 'invalid_event' } })
    expect(transport.connects).toHaveLength(1)
  })

  it('applies STATE_DELTA immutably with structural sharing, and fails on a patch that does not apply', async () => {
    const { rt, transport } = setup()
    void rt.sendMessage('hi')
    const call = await transport.waitForRun(1)
    call.channel.pushAll([
      ev.runStarted('t1', call.input.runId),
      ev.stateSnapshot({ a: { x: 1 }, b: { y: [1] } }),
      ev.stateDelta([{ op: 'add', path: '/b/y/-', value: 2 }]),
    ])
    await step(call.channel)
    rt.flush()
    const s1 = rt.getSnapshot().state as { a: object; b: { y: number[] } }
    expect(s1.b.y).toEqual([1, 2])
    call.channel.push(ev.stateDelta([{ op: 'replace', path: '/a/x', value: 5 }]))
    await step(call.channel)
    rt.flush()
    const s2 = rt.getSnapshot().state as { a: object; b: object }
    expect(s2.b).toBe(s1.b)
    expect(s2.a).not.toBe(s1.a)
    call.channel.push(ev.stateDelta([{ op: 'add', path: '/missing/deep', value: 1 }]))
    await step(call.channel)
    rt.flush()
    await tick()
    expect(rt.getSnapshot()).toMatchObject({ isLoading: false, error: { code: 'PROTOCOL_ERROR' } })
  })
})

describe('ChatRuntime: observers and conversation commands', () => {
  it('onEvent sees every event with its id and run; onFinish reports the outcome', async () => {
    const seen: string[] = []
    const finished: unknown[] = []
    const { rt, transport } = setup({ onEvent: (e, meta) => seen.push(`${meta.id}:${e.type}:${meta.runId}`), onFinish: (info) => finished.push(info) })
    const done = rt.sendMessage('hi')
    const call = await transport.waitForRun(1)
    const runId = call.input.runId
    call.channel.pushAll([ev.runStarted('t1', runId), ev.textStart('m'), ev.finished('t1', runId)])
    await done
    expect(seen).toEqual([`1:RUN_STARTED:${runId}`, `2:TEXT_MESSAGE_START:${runId}`, `3:RUN_FINISHED:${runId}`])
    expect(finished).toEqual([{ outcome: 'success', threadId: 't1', resumed: false }])
  })

  it('reload re-runs the last user turn; newThread clears history and state', async () => {
    const { rt, transport } = setup({ initialState: { a: 1 } })
    const done = rt.sendMessage('first')
    const call = await transport.waitForRun(1)
    call.channel.pushAll([ev.runStarted('t1', call.input.runId), ev.textStart('m'), ev.text('m', 'answer'), ev.finished('t1', call.input.runId)])
    await done
    expect(rt.getSnapshot().messages).toHaveLength(2)
    void rt.reload()
    const again = await transport.waitForRun(2)
    expect(again.input.messages.map((m) => m.role)).toEqual(['user'])
    expect(again.input.runId).not.toBe(call.input.runId)
    rt.stop()
    const id = rt.newThread('t-fresh')
    expect(id).toBe('t-fresh')
    expect(rt.getSnapshot()).toMatchObject({ threadId: 't-fresh', messages: [], state: { a: 1 }, isLoading: false })
    expect(codeOf(() => setup().rt.reload())).toBe('INVALID_STATE') // nothing to reload
  })
})

describe('ChatRuntime: application callbacks', () => {
  it('onFinish of an interaction retired by a thread change reports the retired thread', async () => {
    const infos: unknown[] = []
    const { rt, transport } = setup({ onFinish: (info) => infos.push(info) })
    const done = rt.sendMessage('x')
    await transport.waitForRun(1)
    rt.setThreadId('t2')
    await done
    expect(infos).toEqual([{ outcome: 'retired', threadId: 't1', resumed: false }])
  })

  it('a throwing onFinish / onError does not escape stop() or a thread change; it is reported with console.error', async () => {
    const errors: unknown[][] = []
    const spy = vi.spyOn(console, 'error').mockImplementation((...args: unknown[]) => void errors.push(args))
    try {
      const listener: unknown[] = []
      const { rt, transport } = setup({
        onFinish: () => {
          throw new Error('app bug in onFinish')
        },
        onError: () => {
          throw new Error('app bug in onError')
        },
      })
      rt.subscribeFinish((info) => listener.push(info.outcome))
      const done = rt.sendMessage('x')
      await transport.waitForRun(1)
      expect(() => rt.stop()).not.toThrow()
      await done
      expect(rt.getSnapshot()).toMatchObject({ isLoading: false })
      const again = rt.sendMessage('y')
      await transport.waitForRun(2)
      expect(() => rt.setThreadId('t2')).not.toThrow()
      await again
      // A failed run calls onError too; both throw, both are reported, the interaction still settles.
      const failed = rt.sendMessage('z')
      ;(await transport.waitForRun(3)).channel.fail(new InterludeError('RUN_FAILED', 'refused'))
      await failed
      expect(rt.getSnapshot()).toMatchObject({ isLoading: false, error: { code: 'RUN_FAILED' } })
      expect(listener).toEqual(['stopped', 'retired', 'failed'])
      expect(errors.map((args) => [args[0], (args[1] as Error).message])).toEqual([
        ['@interlude/react: onFinish threw', 'app bug in onFinish'],
        ['@interlude/react: onFinish threw', 'app bug in onFinish'],
        ['@interlude/react: onError threw', 'app bug in onError'],
        ['@interlude/react: onFinish threw', 'app bug in onFinish'],
      ])
    } finally {
      spy.mockRestore()
    }
  })
})

describe('ChatRuntime: publishing a batch', () => {
  it('publishes the checkpoint, the frozen batch and idle flags in one notification', async () => {
    const ctx = setup()
    const { rt, transport, seen } = ctx
    void rt.sendMessage('deploy')
    const call = await transport.waitForRun(1)
    const runId = call.input.runId
    call.channel.pushAll([ev.runStarted('t1', runId), ev.textStart('m1'), ev.text('m1', 'Plan')])
    await step(call.channel)
    const before = seen.notifications
    const observed: unknown[] = []
    rt.subscribe(() => {
      const s = rt.getSnapshot()
      observed.push({ loading: s.isLoading, text: s.messages[1]?.content, batch: s.pendingInterrupts !== undefined })
    })
    const interrupts = [approvalInterrupt('i-1', 'call-1', { metadata: { risk: 'high' }, expiresAt: '2030-01-01T00:05:00Z', subagentRunId: 's-1' })]
    call.channel.pushAll([ev.text('m1', '!'), ev.interrupted('t1', runId, interrupts)])
    await step(call.channel)
    expect(seen.notifications - before).toBe(1)
    expect(observed).toEqual([{ loading: false, text: 'Plan!', batch: true }])
    const batch = rt.getSnapshot().pendingInterrupts!
    expect(batch.interrupts).toEqual(interrupts)
    expect(Object.isFrozen(batch.interrupts)).toBe(true)
    expect(Object.isFrozen(batch.interrupts[0]!.responseSchema)).toBe(true)
    expect(rt.getSnapshot()).toMatchObject({ isLoading: false, isResuming: false })
  })

  it('gives every published batch a fresh local token, even when the server reuses interrupt ids', async () => {
    const ctx = setup()
    const first = await pause(ctx)
    ctx.rt.resume(approveAll(first.batch))
    const call = await ctx.transport.waitForRun(2)
    call.channel.pushAll([ev.runStarted('t1', call.input.runId), ev.interrupted('t1', call.input.runId, twoApprovals())])
    await step(call.channel)
    const second = ctx.rt.getSnapshot().pendingInterrupts!
    expect(second.id).not.toBe(first.batch.id)
    expect(second.interrupts.map((i) => i.id)).toEqual(['i-1', 'i-2'])
    // The old token is stale against the new batch.
    expect(codeOf(() => ctx.rt.resume(approveAll(first.batch)))).toBe('STALE_BATCH')
    expect(JSON.stringify(ctx.transport.runs.map((r) => r.body))).not.toContain(first.batch.id)
  })

  it('fails on an invalid interrupt outcome instead of publishing it', async () => {
    const { rt, transport } = setup()
    const done = rt.sendMessage('x')
    const call = await transport.waitForRun(1)
    call.channel.pushAll([ev.runStarted('t1', call.input.runId), ev.interrupted('t1', call.input.runId, [{ id: 'a', reason: 'tool_call' } as Interrupt])])
    await done
    expect(rt.getSnapshot()).toMatchObject({ pendingInterrupts: undefined, error: { code: 'PROTOCOL_ERROR' } })
  })
})

describe('ChatRuntime: synchronous rejections of resume', () => {
  it('rejects with a typed code and changes nothing', async () => {
    const ctx = setup()
    const { rt, transport } = ctx
    expect(codeOf(() => rt.resume({ batchId: 'nope', entries: [] }))).toBe('STALE_BATCH') // nothing pending
    const { batch } = await pause(ctx)
    const before = rt.getSnapshot()
    const ok = approveAll(batch).entries
    const cases: [string, unknown][] = [
      ['STALE_BATCH', { batchId: 'foreign', entries: ok }],
      ['STALE_BATCH', null],
      ['INVALID_INPUT', { batchId: batch.id, entries: 'all' }],
      ['RESUME_INCOMPLETE', { batchId: batch.id, entries: [] }],
      ['RESUME_INCOMPLETE', { batchId: batch.id, entries: ok.slice(0, 1) }],
      ['RESUME_DUPLICATE_ENTRY', { batchId: batch.id, entries: [ok[0], ok[0], ok[1]] }],
      ['RESUME_UNKNOWN_INTERRUPT', { batchId: batch.id, entries: [...ok, { interruptId: 'i-9', status: 'resolved', payload: { approved: true } }] }],
      ['INVALID_INPUT', { batchId: batch.id, entries: [ok[0], { interruptId: 'i-2', status: 'maybe' }] }],
      ['INVALID_INPUT', { batchId: batch.id, entries: [ok[0], { interruptId: 'i-2', status: 'cancelled', payload: { approved: false } }] }],
      ['INVALID_INPUT', { batchId: batch.id, entries: [ok[0], { interruptId: 'i-2', status: 'resolved', payload: { approved: true, at: new Date() } }] }],
      ['INVALID_INPUT', { batchId: batch.id, entries: [ok[0], { interruptId: 'i-2', status: 'resolved', payload: { n: Number.NaN } }] }],
    ]
    for (const [code, options] of cases) {
      expect([code, codeOf(() => rt.resume(options as never))]).toEqual([code, code])
    }
    expect(rt.getSnapshot()).toBe(before) // not even a notification
    await tick()
    expect(transport.runs).toHaveLength(1)
    // The form stays answerable.
    rt.resume(approveAll(batch))
    expect(rt.getSnapshot().isResuming).toBe(true)
  })

  it('rejects an expired batch before claiming (the whole batch stays visible)', async () => {
    const ctx = setup()
    const { batch } = await pause(ctx, [approvalInterrupt('i-1', 'c1', { expiresAt: '2030-01-01T00:01:00Z' }), approvalInterrupt('i-2', 'c2')])
    ctx.clock.now = Date.parse('2030-01-01T00:01:00Z') // at expiresAt counts as expired
    expect(codeOf(() => ctx.rt.resume(approveAll(batch)))).toBe('INTERRUPT_EXPIRED')
    expect(ctx.rt.getSnapshot().pendingInterrupts).toBe(batch)
    // Cancelling does not help on the client: an expired batch cannot resume at all.
    expect(codeOf(() => ctx.rt.resume({ batchId: batch.id, entries: batch.interrupts.map((i) => ({ interruptId: i.id, status: 'cancelled' as const })) }))).toBe(
      'INTERRUPT_EXPIRED',
    )
  })

  it('claims in the same tick: a second call throws, locks apply, the batch stays visible', async () => {
    const ctx = setup()
    const { rt, transport } = ctx
    const { batch } = await pause(ctx)
    rt.setState({ releases: ['draft'] }) // allowed while awaiting answers
    const notificationsBefore = ctx.seen.notifications
    rt.resume(approveAll(batch))
    expect(ctx.seen.notifications - notificationsBefore).toBe(1)
    expect(rt.getSnapshot()).toMatchObject({ isLoading: true, isResuming: true, pendingInterrupts: batch, status: 'submitted' })
    expect(codeOf(() => rt.resume(approveAll(batch)))).toBe('BATCH_CLAIMED')
    expect(codeOf(() => rt.setState({}))).toBe('INVALID_STATE')
    expect(codeOf(() => rt.sendMessage('more'))).toBe('INVALID_STATE')
    expect(codeOf(() => rt.setMessages([]))).toBe('INVALID_STATE')
    expect(codeOf(() => rt.reload())).toBe('INVALID_STATE')
    expect(codeOf(() => rt.restoreConversation({ threadId: 't1', messages: [] }, { expectedRevision: rt.getSnapshot().recovery.revision }))).toBe('INVALID_STATE')
    const call = await transport.waitForRun(2)
    await tick()
    expect(transport.runs).toHaveLength(2) // one request for two clicks
    // The captured checkpoint: latest committed state, history, the answers; no local token.
    expect(call.input.state).toEqual({ releases: ['draft'] })
    expect(call.input.resume).toEqual(approveAll(batch).entries)
    expect(call.input.messages.map((m) => m.id)).toEqual(rt.getSnapshot().messages.map((m) => m.id))
    expect(call.body).not.toContain(batch.id)
  })

  it('locks sends, message replacement and reload while a batch is pending; state changes never resume', async () => {
    const ctx = setup()
    const { rt, transport } = ctx
    await pause(ctx)
    expect(codeOf(() => rt.sendMessage('again'))).toBe('INVALID_STATE')
    expect(codeOf(() => rt.setMessages([]))).toBe('INVALID_STATE')
    expect(codeOf(() => rt.reload())).toBe('INVALID_STATE')
    rt.setState({ x: 1 })
    rt.setState((s: unknown) => ({ ...(s as object), y: 2 }))
    await tick()
    expect(transport.runs).toHaveLength(1)
    expect(rt.getSnapshot().state).toEqual({ x: 1, y: 2 })
  })
})

describe('ChatRuntime: the acknowledgement boundary', () => {
  it('keeps the batch visible until the matching RUN_STARTED, then isResuming lasts until the end', async () => {
    const ctx = setup()
    const { rt, transport } = ctx
    const { batch } = await pause(ctx)
    const done = rt.resume(approveAll(batch))
    const call = await transport.waitForRun(2)
    call.channel.push(ev.runStarted('t1', call.input.runId))
    await step(call.channel)
    expect(rt.getSnapshot()).toMatchObject({ pendingInterrupts: undefined, isResuming: true, isLoading: true, status: 'streaming' })
    expect(codeOf(() => rt.resume(approveAll(batch)))).toBe('BATCH_CLAIMED')
    call.channel.pushAll([ev.toolResult('r1', 'call-1', '{"ok":true}'), ev.toolResult('r2', 'call-2', '{"ok":true}'), ev.finished('t1', call.input.runId)])
    await done
    expect(rt.getSnapshot()).toMatchObject({ isResuming: false, isLoading: false, error: undefined, recovery: { required: false } })
    expect(rt.getSnapshot().messages.filter((m) => m.role === 'tool')).toHaveLength(2)
  })

  it('retries before acknowledgement with the same runId and the same entries', async () => {
    const ctx = setup()
    const { rt, transport } = ctx
    const { batch } = await pause(ctx)
    const answers = approveAll(batch)
    const entries = answers.entries.map((e) => ({ ...e, payload: { ...e.payload } }))
    rt.resume({ batchId: batch.id, entries })
    entries[0]!.payload.approved = false // later mutation by the caller must not leak
    const first = await transport.waitForRun(2)
    first.channel.fail(new TypeError('fetch failed: socket hang up'))
    const second = await transport.waitForRun(3)
    expect(rt.getSnapshot()).toMatchObject({ pendingInterrupts: batch, isResuming: true })
    second.channel.fail(new InterludeError('NETWORK_ERROR', 'reset'))
    const third = await transport.waitForRun(4)
    expect(second.body).toBe(first.body)
    expect(third.body).toBe(first.body)
    expect(first.input.resume).toEqual(answers.entries)
    third.channel.pushAll([ev.runStarted('t1', first.input.runId), ev.finished('t1', first.input.runId)])
    await step(third.channel)
    expect(rt.getSnapshot()).toMatchObject({ pendingInterrupts: undefined, isResuming: false, error: undefined })
  })

  it('releases the claim when retries run out before acknowledgement; the same batch can be resubmitted', async () => {
    const ctx = setup({ retry: { attempts: 1, delayMs: () => 0 } })
    const { rt, transport } = ctx
    const { batch } = await pause(ctx)
    const done = rt.resume(approveAll(batch))
    ;(await transport.waitForRun(2)).channel.fail(new InterludeError('NETWORK_ERROR', 'down'))
    ;(await transport.waitForRun(3)).channel.fail(new InterludeError('NETWORK_ERROR', 'down'))
    await done
    expect(rt.getSnapshot()).toMatchObject({ pendingInterrupts: batch, isResuming: false, isLoading: false, error: { code: 'NETWORK_ERROR' }, recovery: { required: false } })
    rt.resume(approveAll(batch))
    const again = await transport.waitForRun(4)
    expect(again.input.runId).not.toBe(transport.runs[1]!.input.runId) // a new resume call, a new idempotency key
  })

  it('does not retry an admission refusal; the claim is released and the error is typed', async () => {
    const ctx = setup()
    const { rt, transport } = ctx
    const { batch } = await pause(ctx)
    const done = rt.resume(approveAll(batch))
    ;(await transport.waitForRun(2)).channel.fail(new InterludeError('RESUME_PAYLOAD_INVALID', 'bad', { details: { 'i-1': [] } }))
    await done
    expect(transport.runs).toHaveLength(2)
    expect(rt.getSnapshot()).toMatchObject({ pendingInterrupts: batch, error: { code: 'RESUME_PAYLOAD_INVALID' }, recovery: { required: false } })
  })

  it('stop() in the same tick as resume sends nothing and keeps the batch', async () => {
    const ctx = setup()
    const { rt, transport } = ctx
    const { batch } = await pause(ctx)
    const done = rt.resume(approveAll(batch))
    rt.stop()
    await done
    await tick()
    expect(transport.runs).toHaveLength(1)
    expect(rt.getSnapshot()).toMatchObject({ pendingInterrupts: batch, isResuming: false, isLoading: false, error: undefined, recovery: { required: false } })
  })

  it('stop() before acknowledgement aborts the request, releases the claim and ignores late events', async () => {
    const ctx = setup()
    const { rt, transport } = ctx
    const { batch } = await pause(ctx)
    rt.resume(approveAll(batch))
    const call = await transport.waitForRun(2)
    rt.stop()
    expect(call.channel.aborted).toBe(true)
    expect(transport.cancels).toEqual([]) // nothing acknowledged: nothing to cancel
    expect(rt.getSnapshot()).toMatchObject({ pendingInterrupts: batch, isResuming: false, recovery: { required: false } })
    const frozen = rt.getSnapshot()
    call.channel.pushAll([ev.runStarted('t1', call.input.runId), ev.finished('t1', call.input.runId)])
    await tick()
    expect(rt.getSnapshot()).toBe(frozen)
  })

  it('stop() after acknowledgement cancels on the server and requires recovery', async () => {
    const ctx = setup()
    const { rt, transport } = ctx
    const { batch } = await pause(ctx)
    rt.resume(approveAll(batch))
    const call = await transport.waitForRun(2)
    call.channel.push(ev.runStarted('t1', call.input.runId))
    await step(call.channel)
    rt.stop()
    expect(transport.cancels).toEqual([{ threadId: 't1', runId: call.input.runId }])
    expect(rt.getSnapshot()).toMatchObject({ isLoading: false, isResuming: false, pendingInterrupts: undefined, recovery: { required: true } })
    expect(codeOf(() => rt.sendMessage('x'))).toBe('RECOVERY_REQUIRED')
    expect(codeOf(() => rt.setMessages([]))).toBe('RECOVERY_REQUIRED')
    expect(codeOf(() => rt.resume({ batchId: batch.id, entries: [] }))).toBe('RECOVERY_REQUIRED')
    // The same thread id resets nothing.
    rt.setThreadId('t1')
    expect(rt.getSnapshot().recovery.required).toBe(true)
    // A new thread does.
    rt.setThreadId('t2')
    expect(rt.getSnapshot().recovery.required).toBe(false)
  })

  it('a server failure after acknowledgement requires recovery', async () => {
    const ctx = setup()
    const { rt, transport } = ctx
    const { batch } = await pause(ctx)
    const done = rt.resume(approveAll(batch))
    const call = await transport.waitForRun(2)
    call.channel.pushAll([ev.runStarted('t1', call.input.runId), ev.runError('tool crashed', 'TOOL_ERROR')])
    await done
    expect(rt.getSnapshot()).toMatchObject({ error: { code: 'TOOL_ERROR' }, recovery: { required: true }, pendingInterrupts: undefined })
    expect(transport.runs).toHaveLength(2) // never re-sent after acknowledgement
  })

  it('checks expiry right before the send (and before every retry)', async () => {
    const ctx = setup()
    const { rt, transport, clock } = ctx
    const { batch } = await pause(ctx, [approvalInterrupt('i-1', 'c1', { expiresAt: '2030-01-01T00:01:00Z' })])
    const done = rt.resume(approveAll(batch))
    clock.now = Date.parse('2030-01-01T00:01:00.001Z') // expires between the claim and the send
    await done
    expect(transport.runs).toHaveLength(1)
    expect(rt.getSnapshot()).toMatchObject({ pendingInterrupts: batch, isResuming: false, error: { code: 'INTERRUPT_EXPIRED' }, recovery: { required: false } })

    const ctx2 = setup()
    const p2 = await pause(ctx2, [approvalInterrupt('i-1', 'c1', { expiresAt: '2030-01-01T00:01:00Z' })])
    const done2 = ctx2.rt.resume(approveAll(p2.batch))
    const first = await ctx2.transport.waitForRun(2)
    ctx2.clock.now = Date.parse('2030-01-01T00:02:00Z')
    first.channel.fail(new InterludeError('NETWORK_ERROR', 'down'))
    await done2
    expect(ctx2.transport.runs).toHaveLength(2)
    expect(ctx2.rt.getSnapshot().error?.code).toBe('INTERRUPT_EXPIRED')
  })

  it('joins the run named by ALREADY_RESUMED through the thread events', async () => {
    const ctx = setup()
    const { rt, transport } = ctx
    const { batch } = await pause(ctx)
    const lastSeen = rt.getSnapshot() && transport.counter.value - 1
    const done = rt.resume(approveAll(batch))
    ;(await transport.waitForRun(2)).channel.fail(new InterludeError('ALREADY_RESUMED', 'already', { details: { runId: 'other-run' } }))
    const join = await transport.waitForConnect(1)
    expect(join.lastEventId).toBe(String(lastSeen))
    join.channel.pushAll([
      ev.runStarted('t1', 'unrelated'),
      ev.textStart('zz'),
      ev.finished('t1', 'unrelated'),
      ev.runStarted('t1', 'other-run'),
      ev.toolResult('r1', 'call-1', 'done'),
      ev.finished('t1', 'other-run'),
    ])
    await done
    const s = rt.getSnapshot()
    expect(s).toMatchObject({ error: undefined, pendingInterrupts: undefined, isResuming: false })
    expect(s.messages.some((m) => m.id === 'zz')).toBe(false)
    expect(s.messages.some((m) => m.id === 'r1')).toBe(true)
  })
})

describe('ChatRuntime: reconnect after acknowledgement', () => {
  it('heals a dropped stream from the last event id without duplicated text', async () => {
    const ctx = setup()
    const { rt, transport } = ctx
    const done = rt.sendMessage('long answer')
    const call = await transport.waitForRun(1)
    const runId = call.input.runId
    call.channel.push(ev.runStarted('t1', runId), '1').push(ev.textStart('m1'), '2').push(ev.text('m1', 'Hello, '), '3')
    call.channel.fail(new TypeError('terminated'))
    const re = await transport.waitForConnect(1)
    expect(re.lastEventId).toBe('3')
    expect(rt.getSnapshot().connection).toBe('reconnecting')
    re.channel.push(ev.text('m1', 'wor'), '4')
    re.channel.end() // dropped again, but progress was made
    const re2 = await transport.waitForConnect(2)
    expect(re2.lastEventId).toBe('4')
    re2.channel.push(ev.text('m1', 'ld'), '5').push(ev.textEnd('m1'), '6').push(ev.finished('t1', runId), '7')
    await done
    expect(rt.getSnapshot().messages[1]).toMatchObject({ content: 'Hello, world' })
    expect(rt.getSnapshot()).toMatchObject({ error: undefined, isLoading: false })
    expect(transport.runs).toHaveLength(1)
  })

  it('a silent connection (no events, no pings for reconnect.idleTimeoutMs) is healed from the last event id', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    try {
      const ctx = setup({ reconnect: { attempts: 2, delayMs: () => 0, idleTimeoutMs: 1000 } })
      const { rt, transport } = ctx
      const done = rt.sendMessage('long answer')
      const call = await transport.waitForRun(1)
      const runId = call.input.runId
      call.channel.push(ev.runStarted('t1', runId), '1').push(ev.textStart('m1'), '2').push(ev.text('m1', 'Hello, '), '3')
      await call.channel.drained() // (step() would wait on a faked timer)
      expect(rt.getSnapshot().status).toBe('streaming')
      // Pings (SSE comments) keep the connection alive although no event arrives.
      await vi.advanceTimersByTimeAsync(900)
      call.channel.ping()
      await vi.advanceTimersByTimeAsync(900)
      call.channel.ping()
      await vi.advanceTimersByTimeAsync(900)
      expect(transport.connects).toHaveLength(0)
      expect(call.channel.aborted).toBe(false)
      // Then silence (no FIN, no RST): after idleTimeoutMs the stream counts as dropped.
      await vi.advanceTimersByTimeAsync(150)
      const re = await transport.waitForConnect(1)
      expect(call.channel.aborted).toBe(true)
      expect(re.lastEventId).toBe('3')
      expect(rt.getSnapshot().connection).toBe('reconnecting')
      re.channel.push(ev.text('m1', 'world'), '4').push(ev.textEnd('m1'), '5').push(ev.finished('t1', runId), '6')
      await done
      expect(rt.getSnapshot().messages[1]).toMatchObject({ content: 'Hello, world' })
      expect(rt.getSnapshot()).toMatchObject({ error: undefined, isLoading: false, status: 'idle' })
      expect(transport.runs).toHaveLength(1)
    } finally {
      vi.useRealTimers()
    }
  })

  it('the idle timeout is on by default (45 s) and can be disabled', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    try {
      for (const [options, expected] of [[{}, 1], [{ reconnect: { attempts: 2, delayMs: () => 0, idleTimeoutMs: 0 } }, 0]] as const) {
        const ctx = setup(options)
        void ctx.rt.sendMessage('x')
        const call = await ctx.transport.waitForRun(1)
        call.channel.push(ev.runStarted('t1', call.input.runId))
        await call.channel.drained()
        await vi.advanceTimersByTimeAsync(44_000)
        expect(ctx.transport.connects).toHaveLength(0)
        await vi.advanceTimersByTimeAsync(2_000)
        expect(ctx.transport.connects).toHaveLength(expected)
        ctx.rt.stop()
      }
    } finally {
      vi.useRealTimers()
    }
  })

  it('an unhealable disconnect of a resumed interaction requires recovery', async () => {
    const ctx = setup({ reconnect: { attempts: 2, delayMs: () => 0 } })
    const { rt, transport } = ctx
    const { batch } = await pause(ctx)
    const done = rt.resume(approveAll(batch))
    const call = await transport.waitForRun(2)
    call.channel.push(ev.runStarted('t1', call.input.runId))
    call.channel.fail(new TypeError('terminated'))
    ;(await transport.waitForConnect(1)).channel.fail(new InterludeError('NETWORK_ERROR', 'still down'))
    ;(await transport.waitForConnect(2)).channel.fail(new InterludeError('NETWORK_ERROR', 'still down'))
    await done
    expect(transport.connects).toHaveLength(2)
    expect(transport.runs).toHaveLength(2)
    expect(rt.getSnapshot()).toMatchObject({ recovery: { required: true }, error: { code: 'NETWORK_ERROR' } })
  })
})

describe('ChatRuntime: thread changes', () => {
  it('retires the batch and the claim mid-resume; late callbacks are no-ops; messages stay', async () => {
    const ctx = setup()
    const { rt, transport } = ctx
    const { batch } = await pause(ctx)
    const done = rt.resume(approveAll(batch))
    const call = await transport.waitForRun(2)
    const messages = rt.getSnapshot().messages
    rt.setThreadId('t2')
    await done
    expect(call.channel.aborted).toBe(true)
    expect(transport.cancels).toEqual([]) // server work is not cancelled
    const after = rt.getSnapshot()
    expect(after).toMatchObject({ threadId: 't2', pendingInterrupts: undefined, isLoading: false, isResuming: false })
    expect(after.messages).toBe(messages)
    call.channel.pushAll([ev.runStarted('t1', call.input.runId), ev.textStart('late'), ev.finished('t1', call.input.runId)])
    await tick()
    expect(rt.getSnapshot()).toBe(after)
    expect(codeOf(() => rt.resume(approveAll(batch)))).toBe('STALE_BATCH')
  })

  it('a thread change inside a subscriber retires a batch published in the same commit', async () => {
    const ctx = setup()
    const { rt } = ctx
    rt.subscribe(() => {
      if (rt.getSnapshot().pendingInterrupts) rt.setThreadId('t-elsewhere')
    })
    await pause(ctx).catch(() => undefined)
    expect(rt.getSnapshot()).toMatchObject({ threadId: 't-elsewhere', pendingInterrupts: undefined })
  })
})

describe('ChatRuntime: newThread with the current id', () => {
  it('respects the locks while a batch is pending or claimed, or recovery is required; resets nothing', async () => {
    const ctx = setup({ initialState: { init: true } })
    const { rt, transport } = ctx
    const { batch } = await pause(ctx)
    rt.setState({ x: 1 })
    const before = rt.getSnapshot()
    expect(codeOf(() => rt.newThread('t1'))).toBe('INVALID_STATE')
    expect(rt.getSnapshot()).toBe(before)
    const done = rt.resume(approveAll(batch))
    const claimed = rt.getSnapshot()
    expect(codeOf(() => rt.newThread('t1'))).toBe('INVALID_STATE')
    expect(rt.getSnapshot()).toBe(claimed)
    expect(rt.getSnapshot()).toMatchObject({ isResuming: true, state: { x: 1 } })
    const run = await transport.waitForRun(2)
    run.channel.pushAll([ev.runStarted('t1', run.input.runId)])
    await step(run.channel)
    run.channel.fail(new InterludeError('RUN_FAILED', 'boom'))
    await done
    expect(rt.getSnapshot().recovery.required).toBe(true)
    const failed = rt.getSnapshot()
    expect(codeOf(() => rt.newThread('t1'))).toBe('RECOVERY_REQUIRED')
    expect(rt.getSnapshot()).toBe(failed)
    // A fresh id (the default) is the way out.
    const fresh = rt.newThread()
    expect(fresh).not.toBe('t1')
    expect(rt.getSnapshot()).toMatchObject({ threadId: fresh, messages: [], state: { init: true }, recovery: { required: false } })
  })

  it('while idle and unlocked, the same id clears history and state', async () => {
    const { rt, transport } = setup({ initialState: { a: 1 } })
    const done = rt.sendMessage('hi')
    const call = await transport.waitForRun(1)
    call.channel.pushAll([ev.runStarted('t1', call.input.runId), ev.finished('t1', call.input.runId)])
    await done
    expect(codeOf(() => rt.newThread('t1'))).toBeUndefined()
    expect(rt.getSnapshot()).toMatchObject({ threadId: 't1', messages: [], state: { a: 1 } })
  })
})

describe('ChatRuntime: browser tools', () => {
  it('runs only genuinely new calls of a successful run, then a follow-up run with their results', async () => {
    const calls: unknown[] = []
    const ctx = setup({
      tools: [{ name: 'get_time', description: 'now', handler: (args) => (calls.push(args), { time: '12:00' }) }],
    })
    const { rt, transport } = ctx
    const done = rt.sendMessage('what time is it?')
    const run1 = await transport.waitForRun(1)
    const r1 = run1.input.runId
    run1.channel.pushAll([
      ev.runStarted('t1', r1),
      ev.toolStart('tc-1', 'get_time', 'm1'),
      ev.toolArgs('tc-1', '{"tz":'),
      ev.toolArgs('tc-1', '"UTC"}'),
      ev.toolEnd('tc-1'),
      ev.toolStart('tc-unknown', 'server_side_tool', 'm1'),
      ev.toolEnd('tc-unknown'),
      ev.finished('t1', r1, { type: 'success', pendingToolCallIds: ['tc-1'] }),
    ])
    const run2 = await transport.waitForRun(2)
    expect(calls).toEqual([{ tz: 'UTC' }])
    expect(run2.input.runId).not.toBe(r1)
    expect(run2.input.resume).toBeUndefined()
    expect(run2.input.messages.at(-1)).toMatchObject({ role: 'tool', toolCallId: 'tc-1', content: '{"time":"12:00"}' })
    expect(rt.getSnapshot()).toMatchObject({ isLoading: true, status: 'submitted' })
    run2.channel.pushAll([ev.runStarted('t1', run2.input.runId), ev.finished('t1', run2.input.runId)])
    await done
    expect(transport.runs).toHaveLength(2)
  })

  it('never re-runs saved calls on resume; new calls of the resumed run execute and isResuming covers the follow-up', async () => {
    const executed: string[] = []
    const ctx = setup({
      tools: [
        { name: 'publish_release', description: '', handler: () => executed.push('publish_release') },
        { name: 'notify', description: '', handler: () => (executed.push('notify'), 'sent') },
      ],
    })
    const { rt, transport } = ctx
    // The paused run started `publish_release` (call-1): a saved call.
    const { batch } = await pause(ctx)
    expect(executed).toEqual([]) // a pausing run executes nothing
    const done = rt.resume(approveAll(batch))
    const run = await transport.waitForRun(2)
    const id = run.input.runId
    run.channel.pushAll([
      ev.runStarted('t1', id),
      ev.toolStart('tc-new', 'notify', 'm-b'),
      ev.toolArgs('tc-new', '{}'),
      ev.toolEnd('tc-new'),
      // The server lists the saved call too: still never executed locally.
      ev.finished('t1', id, { type: 'success', pendingToolCallIds: ['call-1', 'tc-new'] }),
    ])
    const follow = await transport.waitForRun(3)
    expect(executed).toEqual(['notify'])
    expect(rt.getSnapshot()).toMatchObject({ isResuming: true, pendingInterrupts: undefined })
    expect(follow.input.resume).toBeUndefined()
    // A follow-up failing even before its own acknowledgement requires recovery.
    follow.channel.fail(new InterludeError('RUN_FAILED', 'refused'))
    await done
    expect(rt.getSnapshot()).toMatchObject({ isResuming: false, recovery: { required: true } })
  })
})

describe('ChatRuntime: saved and foreign browser calls', () => {
  const notifyTool = (executed: string[]) => ({ name: 'deploy', description: '', handler: () => (executed.push('deploy'), 'ok') })

  it('a resumed run re-announcing a saved call (START + pending) never executes it and sends no follow-up', async () => {
    const executed: string[] = []
    const ctx = setup({ tools: [notifyTool(executed)] })
    const { rt, transport } = ctx
    // call-2 (`deploy`, a browser handler) was saved in the paused run without a result.
    const { batch } = await pause(ctx)
    const done = rt.resume(approveAll(batch))
    const run = await transport.waitForRun(2)
    const id = run.input.runId
    run.channel.pushAll([
      ev.runStarted('t1', id),
      ev.toolStart('call-2', 'deploy', 'm-a'),
      ev.toolArgs('call-2', '{}'),
      ev.toolEnd('call-2'),
      ev.finished('t1', id, { type: 'success', pendingToolCallIds: ['call-2'] }),
    ])
    await done
    await tick()
    expect(executed).toEqual([])
    expect(transport.runs).toHaveLength(2)
    expect(rt.getSnapshot()).toMatchObject({ error: undefined, isResuming: false, isLoading: false })
  })

  it('a run joined after ALREADY_RESUMED (another tab started it) never executes its browser tools', async () => {
    const executed: string[] = []
    const ctx = setup({ tools: [notifyTool(executed)] })
    const { rt, transport } = ctx
    const { batch } = await pause(ctx)
    const done = rt.resume(approveAll(batch))
    ;(await transport.waitForRun(2)).channel.fail(new InterludeError('ALREADY_RESUMED', 'already', { details: { runId: 'other-run' } }))
    const join = await transport.waitForConnect(1)
    join.channel.pushAll([
      ev.runStarted('t1', 'other-run'),
      ev.toolStart('tc-n', 'deploy', 'm-b'),
      ev.toolArgs('tc-n', '{}'),
      ev.toolEnd('tc-n'),
      ev.finished('t1', 'other-run', { type: 'success', pendingToolCallIds: ['tc-n'] }),
    ])
    await done
    await tick()
    expect(executed).toEqual([])
    expect(transport.runs).toHaveLength(2)
    expect(rt.getSnapshot()).toMatchObject({ error: undefined, isResuming: false })
    expect(rt.getSnapshot().messages.some((m) => m.role === 'assistant' && m.toolCalls?.some((c) => c.id === 'tc-n'))).toBe(true)
  })
})

describe('ChatRuntime: restore and recover', () => {
  const serverBatch = () => twoApprovals({ expiresAt: '2030-01-01T00:05:00Z' })

  it('restoreConversation rejects busy, stale and invalid input without changing anything', async () => {
    const ctx = setup()
    const { rt } = ctx
    const snap = rt.getSnapshot()
    const rev = snap.recovery.revision
    expect(codeOf(() => rt.restoreConversation({ threadId: 't1', messages: [] }, { expectedRevision: rev + 1 }))).toBe('INVALID_STATE')
    expect(codeOf(() => rt.restoreConversation({ threadId: 'other', messages: [] }, { expectedRevision: rev }))).toBe('INVALID_INPUT')
    expect(codeOf(() => rt.restoreConversation({ threadId: 't1', messages: [{ id: 1 }] } as never, { expectedRevision: rev }))).toBe('INVALID_INPUT')
    expect(codeOf(() => rt.restoreConversation({ threadId: 't1', messages: [], interrupts: [{ id: 'x' }] } as never, { expectedRevision: rev }))).toBe('INVALID_INPUT')
    expect(rt.getSnapshot()).toBe(snap)
    void rt.sendMessage('busy')
    expect(codeOf(() => rt.restoreConversation({ threadId: 't1', messages: [] }, { expectedRevision: rt.getSnapshot().recovery.revision }))).toBe('INVALID_STATE')
  })

  it('restoreConversation deeply validates the snapshot: typed INVALID_INPUT and nothing changed', () => {
    const { rt } = setup()
    const snap = rt.getSnapshot()
    const rev = snap.recovery.revision
    const user = { id: 'u', role: 'user', content: 'hi' }
    const call = { id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }
    const invalid: [string, unknown][] = [
      ['interrupts object', { threadId: 't1', messages: [], interrupts: { a: 1 } }],
      ['interrupts string', { threadId: 't1', messages: [], interrupts: 'x' }],
      ['toolCalls string', { threadId: 't1', messages: [{ id: 'a', role: 'assistant', toolCalls: 'nope' }] }],
      ['tool call without type', { threadId: 't1', messages: [{ id: 'a', role: 'assistant', toolCalls: [{ ...call, type: undefined }] }] }],
      ['tool call arguments object', { threadId: 't1', messages: [{ id: 'a', role: 'assistant', toolCalls: [{ ...call, function: { name: 'f', arguments: {} } }] }] }],
      ['unknown role', { threadId: 't1', messages: [{ id: 'a', role: 'hacker', content: 1 }] }],
      ['duplicate ids', { threadId: 't1', messages: [user, { ...user, content: 'again' }] }],
      ['message not an object', { threadId: 't1', messages: ['hi'] }],
      ['user without content', { threadId: 't1', messages: [{ id: 'u', role: 'user' }] }],
      ['tool without toolCallId', { threadId: 't1', messages: [{ id: 't', role: 'tool', content: 'x' }] }],
      ['system content array', { threadId: 't1', messages: [{ id: 's', role: 'system', content: [] }] }],
      ['negative revision', { threadId: 't1', messages: [], revision: -1 }],
      ['fractional revision', { threadId: 't1', messages: [], revision: 1.5 }],
      ['non-JSON state', { threadId: 't1', messages: [], state: { a: undefined } }],
      ['bad unsettledEffects', { threadId: 't1', messages: [], unsettledEffects: [{ toolCallId: 'x' }] }],
      ['thread mismatch', { threadId: 't2', messages: [] }],
      ['not an object', null],
    ]
    for (const [name, value] of invalid) {
      let error: unknown
      try {
        rt.restoreConversation(value as never, { expectedRevision: rev })
      } catch (e) {
        error = e
      }
      expect(InterludeError.isInstance(error), name).toBe(true)
      expect((error as InterludeError).code, name).toBe('INVALID_INPUT')
      expect(rt.getSnapshot(), name).toBe(snap)
    }
    // A complete valid snapshot with every role is accepted.
    rt.restoreConversation(
      {
        threadId: 't1',
        revision: 3,
        lastEventId: 7,
        messages: [
          { id: 'sys', role: 'system', content: 'be brief' },
          user,
          { id: 'a', role: 'assistant', content: 'ok', toolCalls: [call] },
          { id: 'r', role: 'tool', toolCallId: 'c1', content: 'done' },
          { id: 'a2', role: 'assistant' },
        ],
        interrupts: [],
      } as never,
      { expectedRevision: rev },
    )
    expect(rt.getSnapshot().messages.map((m) => m.id)).toEqual(['sys', 'u', 'a', 'r', 'a2'])
  })

  it('restoreConversation installs history, state and a fresh answerable batch, clearing recovery', async () => {
    const ctx = setup()
    const { rt, transport } = ctx
    const { batch } = await pause(ctx)
    rt.resume(approveAll(batch))
    const call = await transport.waitForRun(2)
    call.channel.pushAll([ev.runStarted('t1', call.input.runId), ev.runError('lost', 'INTERNAL')])
    await step(call.channel)
    expect(rt.getSnapshot().recovery.required).toBe(true)
    const kept = rt.getSnapshot().messages[0]
    const rev = rt.getSnapshot().recovery.revision
    const interrupts = serverBatch()
    rt.restoreConversation(
      { threadId: 't1', revision: 7, status: 'interrupted', messages: [kept!, { id: 'srv-1', role: 'assistant', content: 'Plan' }], state: { releases: [] }, interrupts, lastEventId: 42 },
      { expectedRevision: rev },
    )
    const s = rt.getSnapshot()
    expect(s.recovery).toEqual({ revision: rev + 1, required: false })
    expect(s.error).toBeUndefined()
    expect(s.messages[0]).toBe(kept) // equal messages keep identity
    expect(s.pendingInterrupts?.interrupts).toEqual(interrupts)
    expect(s.pendingInterrupts?.id).not.toBe(batch.id)
    await tick()
    expect(transport.runs).toHaveLength(2) // no network, no tool execution
    rt.resume(approveAll(s.pendingInterrupts!, false))
    const answer = await transport.waitForRun(3)
    expect(answer.input.resume?.map((e) => e.interruptId)).toEqual(['i-1', 'i-2'])
  })

  it('recover() fetches the server snapshot and restores the pending batch', async () => {
    const ctx = setup()
    const { rt, transport } = ctx
    transport.threads.set('t1', { threadId: 't1', revision: 3, status: 'interrupted', messages: [], state: { a: 1 }, interrupts: serverBatch(), lastEventId: 9 })
    const result = await rt.recover()
    expect(result.attached).toBe(false)
    expect(rt.getSnapshot()).toMatchObject({ state: { a: 1 }, pendingInterrupts: { interrupts: serverBatch() } })
  })

  it('concurrent recover() calls share one lookup and one restore; an aborted caller rejects alone', async () => {
    const ctx = setup()
    const { rt, transport } = ctx
    transport.threads.set('t1', { threadId: 't1', revision: 3, status: 'interrupted', messages: [], state: { a: 1 }, interrupts: serverBatch(), lastEventId: 9 })
    let lookups = 0
    const getThread = transport.getThread.bind(transport)
    transport.getThread = (threadId: string) => (lookups++, getThread(threadId))
    const aborted = new AbortController()
    const [a, b, c] = [rt.recover(), rt.recover(), rt.recover({ signal: aborted.signal })]
    aborted.abort()
    const [ra, rb, rc] = await Promise.allSettled([a, b, c])
    expect(lookups).toBe(1)
    expect(ra).toMatchObject({ status: 'fulfilled', value: { attached: false } })
    expect(rb).toEqual(ra)
    expect(rc).toMatchObject({ status: 'rejected', reason: { code: 'ABORTED' } })
    const batch = rt.getSnapshot().pendingInterrupts
    expect(batch).toMatchObject({ interrupts: serverBatch() })
    // Once settled, a new call is a new lookup (and a fresh local batch).
    await rt.recover()
    expect(lookups).toBe(2)
    expect(rt.getSnapshot().pendingInterrupts!.id).not.toBe(batch!.id)
  })

  it('recover() rejects and changes nothing when the runtime changed during the lookup', async () => {
    const ctx = setup()
    const { rt, transport } = ctx
    transport.threads.set('t1', { threadId: 't1', revision: 3, status: 'idle', messages: [], state: {}, lastEventId: 0 })
    const pending = rt.recover()
    rt.setState({ local: true })
    await expect(pending).rejects.toMatchObject({ code: 'INVALID_STATE', details: { reason: 'stale_revision' } })
    expect(rt.getSnapshot().state).toEqual({ local: true })
    await expect(setup().rt.recover()).rejects.toMatchObject({ code: 'THREAD_NOT_FOUND' })
  })

  it('recover() re-attaches to a running thread: replay from the log, skip earlier runs, follow the live tail', async () => {
    const ctx = setup()
    const { rt, transport } = ctx
    transport.threads.set('t1', {
      threadId: 't1',
      revision: 5,
      status: 'running',
      activeRunId: 'live-run',
      messages: [{ id: 'u1', role: 'user', content: 'go' }],
      state: {},
      lastEventId: 12,
    })
    const result = await rt.recover()
    expect(result.attached).toBe(true)
    expect(rt.getSnapshot()).toMatchObject({ isLoading: true, isResuming: false })
    const conn = await transport.waitForConnect(1)
    expect(conn.lastEventId).toBe('0')
    conn.channel.pushAll([
      ev.runStarted('t1', 'old-run'),
      ev.textStart('old'),
      ev.finished('t1', 'old-run'),
      ev.runStarted('t1', 'live-run'),
      ev.textStart('m-live'),
      ev.text('m-live', 'still going'),
      ev.finished('t1', 'live-run'),
    ])
    await step(conn.channel)
    const s = rt.getSnapshot()
    expect(s.messages.map((m) => m.id)).toEqual(['u1', 'm-live'])
    expect(s).toMatchObject({ isLoading: false, error: undefined })
  })

  it('getRecoveryConfiguration returns the owned configuration synchronously and schedules nothing', async () => {
    const { rt, transport } = setup({ tools: [{ name: 'a', description: 'A', parameters: { type: 'object' }, handler: () => 1 }], forwardedProps: { locale: 'fr' } })
    expect(rt.getRecoveryConfiguration()).toEqual({
      threadId: 't1',
      revision: 0,
      tools: [{ name: 'a', description: 'A', parameters: { type: 'object' } }],
      context: [],
      forwardedProps: { locale: 'fr' },
    })
    await tick()
    expect(transport.runs).toHaveLength(0)
  })
})

describe('ChatRuntime: snapshot identity and coalescing', () => {
  it('unchanged messages keep identity across deltas; each burst is one notification', async () => {
    const { rt, transport, seen } = setup({ initialMessages: [{ id: 'old', role: 'user', content: 'earlier' }] })
    void rt.sendMessage('stream please')
    const call = await transport.waitForRun(1)
    call.channel.pushAll([ev.runStarted('t1', call.input.runId), ev.textStart('m1')])
    await step(call.channel)
    rt.flush()
    const s0 = rt.getSnapshot()
    const before = seen.notifications
    for (let i = 0; i < 500; i++) call.channel.push(ev.text('m1', `${i % 10}`))
    await step(call.channel)
    rt.flush()
    const s1 = rt.getSnapshot()
    expect(seen.notifications - before).toBe(1)
    expect(s1.messages).not.toBe(s0.messages)
    expect(s1.messages[0]).toBe(s0.messages[0])
    expect(s1.messages[1]).toBe(s0.messages[1])
    expect((s1.messages[2]!.content as string).length).toBe(500)
    expect(s1.recovery).toBe(s0.recovery)
    expect(Object.isFrozen(s1.messages)).toBe(true)
    expect(Object.isFrozen(s1.messages[2])).toBe(true)
  })

  it('MESSAGES_SNAPSHOT keeps the identity of equal messages', async () => {
    const { rt, transport } = setup({ initialMessages: [{ id: 'a', role: 'user', content: 'one' }] })
    void rt.sendMessage('two')
    const call = await transport.waitForRun(1)
    const [a, b] = rt.getSnapshot().messages
    call.channel.pushAll([
      ev.runStarted('t1', call.input.runId),
      ev.messagesSnapshot([
        { id: 'a', role: 'user', content: 'one' },
        { id: b!.id, role: 'user', content: 'two (edited by server)' },
      ]),
    ])
    await step(call.channel)
    rt.flush()
    const [a2, b2] = rt.getSnapshot().messages
    expect(a2).toBe(a)
    expect(b2).not.toBe(b)
    expect(b2).toMatchObject({ content: 'two (edited by server)' })
  })
})
