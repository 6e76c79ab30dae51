import { InterludeError } from '@interlude/protocol'
import { describe, expect, it, vi } from 'vitest'
import { ev, step, tick } from '../test-utils/controllable-transport.ts'
import { flushDeltas } from './chat-runtime.ts'
import { approveAll, codeOf, pause, setup, twoApprovals } from '../test-utils/runtime-setup.ts'

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

describe('ChatRuntime: restore and recover', () => {
  const serverBatch = () => twoApprovals({ expiresAt: '2030-01-01T00:05:00Z' })

  it('restoreConversation rejects busy, stale and invalid input without changing anything', async () => {
    const ctx = setup()
    const { rt } = ctx
    const snap = rt.getSnapshot()
    const rev = snap.recovery.revision
    expect(codeOf(() => rt.restoreConversation({ threadId: 't1', messages: [] }, { expectedRevision: rev + 1 }))).toBe(
      'INVALID_STATE',
    )
    expect(codeOf(() => rt.restoreConversation({ threadId: 'other', messages: [] }, { expectedRevision: rev }))).toBe(
      'INVALID_INPUT',
    )
    expect(
      codeOf(() =>
        rt.restoreConversation({ threadId: 't1', messages: [{ id: 1 }] } as never, { expectedRevision: rev }),
      ),
    ).toBe('INVALID_INPUT')
    expect(
      codeOf(() =>
        rt.restoreConversation({ threadId: 't1', messages: [], interrupts: [{ id: 'x' }] } as never, {
          expectedRevision: rev,
        }),
      ),
    ).toBe('INVALID_INPUT')
    expect(rt.getSnapshot()).toBe(snap)
    void rt.sendMessage('busy')
    expect(
      codeOf(() =>
        rt.restoreConversation(
          { threadId: 't1', messages: [] },
          { expectedRevision: rt.getSnapshot().recovery.revision },
        ),
      ),
    ).toBe('INVALID_STATE')
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
      [
        'tool call without type',
        { threadId: 't1', messages: [{ id: 'a', role: 'assistant', toolCalls: [{ ...call, type: undefined }] }] },
      ],
      [
        'tool call arguments object',
        {
          threadId: 't1',
          messages: [{ id: 'a', role: 'assistant', toolCalls: [{ ...call, function: { name: 'f', arguments: {} } }] }],
        },
      ],
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
      {
        threadId: 't1',
        revision: 7,
        status: 'interrupted',
        messages: [kept!, { id: 'srv-1', role: 'assistant', content: 'Plan' }],
        state: { releases: [] },
        interrupts,
        lastEventId: 42,
      },
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
    transport.threads.set('t1', {
      threadId: 't1',
      revision: 3,
      status: 'interrupted',
      messages: [],
      state: { a: 1 },
      interrupts: serverBatch(),
      lastEventId: 9,
    })
    const result = await rt.recover()
    expect(result.attached).toBe(false)
    expect(rt.getSnapshot()).toMatchObject({ state: { a: 1 }, pendingInterrupts: { interrupts: serverBatch() } })
  })

  it('concurrent recover() calls share one lookup and one restore; an aborted caller rejects alone', async () => {
    const ctx = setup()
    const { rt, transport } = ctx
    transport.threads.set('t1', {
      threadId: 't1',
      revision: 3,
      status: 'interrupted',
      messages: [],
      state: { a: 1 },
      interrupts: serverBatch(),
      lastEventId: 9,
    })
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
    transport.threads.set('t1', {
      threadId: 't1',
      revision: 3,
      status: 'idle',
      messages: [],
      state: {},
      lastEventId: 0,
    })
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
    const { rt, transport } = setup({
      tools: [{ name: 'a', description: 'A', parameters: { type: 'object' }, handler: () => 1 }],
      forwardedProps: { locale: 'fr' },
    })
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
    flushDeltas(rt)
    const s0 = rt.getSnapshot()
    const before = seen.notifications
    for (let i = 0; i < 500; i++) call.channel.push(ev.text('m1', `${i % 10}`))
    await step(call.channel)
    flushDeltas(rt)
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
    flushDeltas(rt)
    const [a2, b2] = rt.getSnapshot().messages
    expect(a2).toBe(a)
    expect(b2).not.toBe(b)
    expect(b2).toMatchObject({ content: 'two (edited by server)' })
  })
})
