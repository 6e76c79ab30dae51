import { InterludeError } from '@interlude/protocol'
import type { Interrupt } from '@interlude/protocol'
import { describe, expect, it, vi } from 'vitest'
import { approvalInterrupt, ev, step, tick } from '../test-utils/controllable-transport.ts'
import { flushDeltas } from './chat-runtime.ts'
import { approveAll, codeOf, pause, setup, twoApprovals } from '../test-utils/runtime-setup.ts'

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
    flushDeltas(rt)
    expect(rt.getSnapshot().messages[1]).toEqual({ id: 'm1', role: 'assistant', content: '你好 👋🏽' })
    call.channel.push(ev.finished('t1', 'id-2'))
    await done
    expect(rt.getSnapshot()).toMatchObject({ isLoading: false, status: 'idle', error: undefined })
  })

  it('fails a run whose RUN_ERROR arrives after acknowledgement, without requiring recovery', async () => {
    const { rt, transport } = setup()
    const done = rt.sendMessage('hi')
    const call = await transport.waitForRun(1)
    call.channel.pushAll([
      ev.runStarted('t1', call.input.runId),
      ev.textStart('m1'),
      ev.text('m1', 'partial'),
      ev.runError('boom', 'MODEL_ERROR'),
    ])
    await done
    const s = rt.getSnapshot()
    expect(s.error?.code).toBe('MODEL_ERROR')
    expect(s.messages[1]).toMatchObject({ content: 'partial' })
    expect(s.recovery.required).toBe(false)
    expect(transport.runs).toHaveLength(1) // a server failure is never retried
  })

  it('keeps the typed details of a RUN_ERROR (a model error’s kind and retryability) on the error', async () => {
    const { rt, transport } = setup()
    const done = rt.sendMessage('hi')
    const call = await transport.waitForRun(1)
    call.channel.pushAll([
      ev.runStarted('t1', call.input.runId),
      {
        ...ev.runError('The model request timed out.', 'MODEL_ERROR'),
        details: { kind: 'timeout', retryable: true },
      } as never,
    ])
    await done
    expect(rt.getSnapshot().error?.details).toEqual({ kind: 'timeout', retryable: true, rawCode: 'MODEL_ERROR' })
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
    call.channel
      .push(ev.runStarted('t1', runId), '1')
      .fail(
        new InterludeError('PROTOCOL_ERROR', 'SSE frame data is not JSON.', { details: { reason: 'invalid_json' } }),
      )
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
    flushDeltas(rt)
    const s1 = rt.getSnapshot().state as { a: object; b: { y: number[] } }
    expect(s1.b.y).toEqual([1, 2])
    call.channel.push(ev.stateDelta([{ op: 'replace', path: '/a/x', value: 5 }]))
    await step(call.channel)
    flushDeltas(rt)
    const s2 = rt.getSnapshot().state as { a: object; b: object }
    expect(s2.b).toBe(s1.b)
    expect(s2.a).not.toBe(s1.a)
    call.channel.push(ev.stateDelta([{ op: 'add', path: '/missing/deep', value: 1 }]))
    await step(call.channel)
    flushDeltas(rt)
    await tick()
    expect(rt.getSnapshot()).toMatchObject({ isLoading: false, error: { code: 'PROTOCOL_ERROR' } })
  })
})

describe('ChatRuntime: observers and conversation commands', () => {
  it('onEvent sees every event with its id and run; onFinish reports the outcome', async () => {
    const seen: string[] = []
    const finished: unknown[] = []
    const { rt, transport } = setup({
      onEvent: (e, meta) => seen.push(`${meta.id}:${e.type}:${meta.runId}`),
      onFinish: (info) => finished.push(info),
    })
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
    call.channel.pushAll([
      ev.runStarted('t1', call.input.runId),
      ev.textStart('m'),
      ev.text('m', 'answer'),
      ev.finished('t1', call.input.runId),
    ])
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
    const interrupts = [
      approvalInterrupt('i-1', 'call-1', {
        metadata: { risk: 'high' },
        expiresAt: '2030-01-01T00:05:00Z',
        subagentRunId: 's-1',
      }),
    ]
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
    call.channel.pushAll([
      ev.runStarted('t1', call.input.runId),
      ev.interrupted('t1', call.input.runId, twoApprovals()),
    ])
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
    call.channel.pushAll([
      ev.runStarted('t1', call.input.runId),
      ev.interrupted('t1', call.input.runId, [{ id: 'a', reason: 'tool_call' } as Interrupt]),
    ])
    await done
    expect(rt.getSnapshot()).toMatchObject({ pendingInterrupts: undefined, error: { code: 'PROTOCOL_ERROR' } })
  })
})
