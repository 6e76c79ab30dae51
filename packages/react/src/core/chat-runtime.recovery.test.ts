import { InterludeError } from '@interlude/protocol'
import { describe, expect, it, vi } from 'vitest'
import { ev, step, tick } from '../test-utils/controllable-transport.ts'
import { approveAll, codeOf, pause, setup } from '../test-utils/runtime-setup.ts'

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
      call.channel
        .push(ev.runStarted('t1', runId), '1')
        .push(ev.textStart('m1'), '2')
        .push(ev.text('m1', 'Hello, '), '3')
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
      for (const [options, expected] of [
        [{}, 1],
        [{ reconnect: { attempts: 2, delayMs: () => 0, idleTimeoutMs: 0 } }, 0],
      ] as const) {
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
    call.channel.pushAll([
      ev.runStarted('t1', call.input.runId),
      ev.textStart('late'),
      ev.finished('t1', call.input.runId),
    ])
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
    expect(rt.getSnapshot()).toMatchObject({
      threadId: fresh,
      messages: [],
      state: { init: true },
      recovery: { required: false },
    })
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
  const notifyTool = (executed: string[]) => ({
    name: 'deploy',
    description: '',
    handler: () => (executed.push('deploy'), 'ok'),
  })

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
    ;(await transport.waitForRun(2)).channel.fail(
      new InterludeError('ALREADY_RESUMED', 'already', { details: { runId: 'other-run' } }),
    )
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
    expect(
      rt.getSnapshot().messages.some((m) => m.role === 'assistant' && m.toolCalls?.some((c) => c.id === 'tc-n')),
    ).toBe(true)
  })
})
