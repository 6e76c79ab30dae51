import { InterludeError } from '@interlude/protocol'
import { describe, expect, it } from 'vitest'
import { approvalInterrupt, ev, step, tick } from '../test-utils/controllable-transport.ts'
import { approveAll, codeOf, pause, setup } from '../test-utils/runtime-setup.ts'

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
