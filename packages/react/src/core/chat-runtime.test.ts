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
      [
        'RESUME_UNKNOWN_INTERRUPT',
        {
          batchId: batch.id,
          entries: [...ok, { interruptId: 'i-9', status: 'resolved', payload: { approved: true } }],
        },
      ],
      ['INVALID_INPUT', { batchId: batch.id, entries: [ok[0], { interruptId: 'i-2', status: 'maybe' }] }],
      [
        'INVALID_INPUT',
        {
          batchId: batch.id,
          entries: [ok[0], { interruptId: 'i-2', status: 'cancelled', payload: { approved: false } }],
        },
      ],
      [
        'INVALID_INPUT',
        {
          batchId: batch.id,
          entries: [ok[0], { interruptId: 'i-2', status: 'resolved', payload: { approved: true, at: new Date() } }],
        },
      ],
      [
        'INVALID_INPUT',
        { batchId: batch.id, entries: [ok[0], { interruptId: 'i-2', status: 'resolved', payload: { n: Number.NaN } }] },
      ],
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
    const { batch } = await pause(ctx, [
      approvalInterrupt('i-1', 'c1', { expiresAt: '2030-01-01T00:01:00Z' }),
      approvalInterrupt('i-2', 'c2'),
    ])
    ctx.clock.now = Date.parse('2030-01-01T00:01:00Z') // at expiresAt counts as expired
    expect(codeOf(() => ctx.rt.resume(approveAll(batch)))).toBe('INTERRUPT_EXPIRED')
    expect(ctx.rt.getSnapshot().pendingInterrupts).toBe(batch)
    // Cancelling does not help on the client: an expired batch cannot resume at all.
    expect(
      codeOf(() =>
        ctx.rt.resume({
          batchId: batch.id,
          entries: batch.interrupts.map((i) => ({ interruptId: i.id, status: 'cancelled' as const })),
        }),
      ),
    ).toBe('INTERRUPT_EXPIRED')
  })

  it('reads a loose expiresAt leniently: the pause is published, expiry uses UTC, unreadable means none', async () => {
    const ctx = setup()
    const { batch } = await pause(ctx, [
      approvalInterrupt('i-1', 'c1', { expiresAt: '2030-01-01T00:01:00' }), // no zone: read as UTC
      approvalInterrupt('i-2', 'c2', { expiresAt: '2030-01-01 00:02:00+0000' }),
      approvalInterrupt('i-3', 'c3', { expiresAt: 'when the cows come home' }),
    ])
    expect(ctx.rt.getSnapshot()).toMatchObject({ error: undefined, pendingInterrupts: batch })
    expect(batch.interrupts.map((i) => i.expiresAt)).toEqual([
      '2030-01-01T00:01:00',
      '2030-01-01 00:02:00+0000',
      'when the cows come home',
    ])
    ctx.clock.now = Date.UTC(2030, 0, 1, 0, 1) - 1
    const before = ctx.rt.getSnapshot()
    ctx.clock.now = Date.UTC(2030, 0, 1, 0, 1)
    expect(codeOf(() => ctx.rt.resume(approveAll(batch)))).toBe('INTERRUPT_EXPIRED')
    expect(ctx.rt.getSnapshot()).toBe(before)
    ctx.clock.now = Date.UTC(2030, 0, 1, 0, 1) - 1
    ctx.rt.resume(approveAll(batch))
    expect(ctx.rt.getSnapshot().isResuming).toBe(true)
  })

  it('claims in the same tick: a second call throws, locks apply, the batch stays visible', async () => {
    const ctx = setup()
    const { rt, transport } = ctx
    const { batch } = await pause(ctx)
    rt.setState({ releases: ['draft'] }) // allowed while awaiting answers
    const notificationsBefore = ctx.seen.notifications
    rt.resume(approveAll(batch))
    expect(ctx.seen.notifications - notificationsBefore).toBe(1)
    expect(rt.getSnapshot()).toMatchObject({
      isLoading: true,
      isResuming: true,
      pendingInterrupts: batch,
      status: 'submitted',
    })
    expect(codeOf(() => rt.resume(approveAll(batch)))).toBe('BATCH_CLAIMED')
    expect(codeOf(() => rt.setState({}))).toBe('INVALID_STATE')
    expect(codeOf(() => rt.sendMessage('more'))).toBe('INVALID_STATE')
    expect(codeOf(() => rt.setMessages([]))).toBe('INVALID_STATE')
    expect(codeOf(() => rt.reload())).toBe('INVALID_STATE')
    expect(
      codeOf(() =>
        rt.restoreConversation(
          { threadId: 't1', messages: [] },
          { expectedRevision: rt.getSnapshot().recovery.revision },
        ),
      ),
    ).toBe('INVALID_STATE')
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
    expect(rt.getSnapshot()).toMatchObject({
      pendingInterrupts: undefined,
      isResuming: true,
      isLoading: true,
      status: 'streaming',
    })
    expect(codeOf(() => rt.resume(approveAll(batch)))).toBe('BATCH_CLAIMED')
    call.channel.pushAll([
      ev.toolResult('r1', 'call-1', '{"ok":true}'),
      ev.toolResult('r2', 'call-2', '{"ok":true}'),
      ev.finished('t1', call.input.runId),
    ])
    await done
    expect(rt.getSnapshot()).toMatchObject({
      isResuming: false,
      isLoading: false,
      error: undefined,
      recovery: { required: false },
    })
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
    expect(rt.getSnapshot()).toMatchObject({
      pendingInterrupts: batch,
      isResuming: false,
      isLoading: false,
      error: { code: 'NETWORK_ERROR' },
      recovery: { required: false },
    })
    rt.resume(approveAll(batch))
    const again = await transport.waitForRun(4)
    expect(again.input.runId).not.toBe(transport.runs[1]!.input.runId) // a new resume call, a new idempotency key
  })

  it('does not retry an admission refusal; the claim is released and the error is typed', async () => {
    const ctx = setup()
    const { rt, transport } = ctx
    const { batch } = await pause(ctx)
    const done = rt.resume(approveAll(batch))
    ;(await transport.waitForRun(2)).channel.fail(
      new InterludeError('RESUME_PAYLOAD_INVALID', 'bad', { details: { 'i-1': [] } }),
    )
    await done
    expect(transport.runs).toHaveLength(2)
    expect(rt.getSnapshot()).toMatchObject({
      pendingInterrupts: batch,
      error: { code: 'RESUME_PAYLOAD_INVALID' },
      recovery: { required: false },
    })
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
    expect(rt.getSnapshot()).toMatchObject({
      pendingInterrupts: batch,
      isResuming: false,
      isLoading: false,
      error: undefined,
      recovery: { required: false },
    })
  })

  it('stop() before acknowledgement aborts the request, cancels its runId, releases the claim and ignores late events', async () => {
    const ctx = setup()
    const { rt, transport } = ctx
    const { batch } = await pause(ctx)
    rt.resume(approveAll(batch))
    const call = await transport.waitForRun(2)
    rt.stop()
    expect(call.channel.aborted).toBe(true)
    // The request is on its way: the server may admit it after the stop, so it is cancelled by its runId.
    expect(transport.cancels).toEqual([{ threadId: 't1', runId: call.input.runId }])
    expect(rt.getSnapshot()).toMatchObject({
      pendingInterrupts: batch,
      isResuming: false,
      recovery: { required: false },
    })
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
    expect(rt.getSnapshot()).toMatchObject({
      isLoading: false,
      isResuming: false,
      pendingInterrupts: undefined,
      recovery: { required: true },
    })
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
    expect(rt.getSnapshot()).toMatchObject({
      error: { code: 'TOOL_ERROR' },
      recovery: { required: true },
      pendingInterrupts: undefined,
    })
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
    expect(rt.getSnapshot()).toMatchObject({
      pendingInterrupts: batch,
      isResuming: false,
      error: { code: 'INTERRUPT_EXPIRED' },
      recovery: { required: false },
    })

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
    ;(await transport.waitForRun(2)).channel.fail(
      new InterludeError('ALREADY_RESUMED', 'already', { details: { runId: 'other-run' } }),
    )
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
