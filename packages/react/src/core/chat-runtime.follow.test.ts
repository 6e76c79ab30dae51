/**
 * The follower (docs/client-contract.md#decided-elsewhere) and deadlines (#deadlines) over a controllable
 * transport, step by step: while a batch is pending and unclaimed the runtime follows the thread from its last
 * event id, joins a run decided elsewhere, reconnects from the last id, stops on a claim, a thread change or a
 * final error; an expired batch is marked, and only a `keep` batch accepts the all-cancelled close.
 */
import type { AgUiEvent } from '@interlude/protocol'
import { InterludeError } from '@interlude/protocol'
import { describe, expect, it } from 'vitest'
import { approvalInterrupt, ev, step, tick } from '../test-utils/controllable-transport.ts'
import { flushDeltas } from './chat-runtime.ts'
import { approveAll, codeOf, pause, setup, T0, twoApprovals } from '../test-utils/runtime-setup.ts'

const decision = (runId: string, decidedBy = 'mgr'): AgUiEvent =>
  ({
    type: 'CUSTOM',
    name: 'interlude.decision',
    value: { threadId: 't1', runId, interruptIds: ['i-1', 'i-2'], entries: [], decidedBy, via: 'api', at: 'x' },
  }) as AgUiEvent

const cancelAll = (batch: { id: string; interrupts: readonly { id: string }[] }) => ({
  batchId: batch.id,
  entries: batch.interrupts.map((i) => ({ interruptId: i.id, status: 'cancelled' as const })),
})

describe('ChatRuntime: following a thread while a batch waits', () => {
  it('follows from the last event id, joins a run decided elsewhere once, and exposes its decision record', async () => {
    const ctx = setup({ follow: true })
    const { rt, transport } = ctx
    const { batch } = await pause(ctx)
    const follow = await transport.waitForConnect(1)
    expect(follow.lastEventId).toBe('12') // the paused run's RUN_FINISHED
    follow.channel.pushAll([ev.runStarted('t1', 'run-mgr')])
    await step(follow.channel)
    expect(follow.channel.aborted).toBe(true) // handed over to the join
    const join = await transport.waitForConnect(2)
    expect(join.lastEventId).toBe('12') // replays the decided run from its start
    join.channel.pushAll([
      ev.runStarted('t1', 'run-mgr'),
      decision('run-mgr'),
      ev.textStart('m-b'),
      ev.text('m-b', 'All steps ran.'),
      ev.textEnd('m-b'),
    ])
    await step(join.channel)
    flushDeltas(rt) // content (the record included) commits with the next coalesced commit
    expect(rt.getSnapshot()).toMatchObject({
      pendingInterrupts: undefined,
      isLoading: true,
      isResuming: false,
      lastDecision: { runId: 'run-mgr', decidedBy: 'mgr' },
    })
    join.channel.push(ev.finished('t1', 'run-mgr'))
    await step(join.channel)
    const s = rt.getSnapshot()
    expect(s).toMatchObject({ isLoading: false, error: undefined, recovery: { required: false } })
    expect(s.decisions).toHaveLength(1)
    expect(s.messages.filter((m) => m.content === 'All steps ran.')).toHaveLength(1)
    expect(codeOf(() => rt.resume(approveAll(batch)))).toBe('STALE_BATCH')
    await tick()
    expect(transport.connects).toHaveLength(2) // nothing pending: no more following
  })

  it('a claim closes the follow stream; a released claim reopens it; a thread change closes it', async () => {
    const ctx = setup({ follow: true })
    const { rt, transport } = ctx
    const { batch } = await pause(ctx)
    const first = await transport.waitForConnect(1)
    void rt.resume(approveAll(batch))
    expect(first.channel.aborted).toBe(true)
    rt.stop() // same tick: nothing sent, the batch is answerable again
    const second = await transport.waitForConnect(2)
    expect(second.lastEventId).toBe('12')
    rt.setThreadId('t2')
    expect(second.channel.aborted).toBe(true)
    await tick()
    expect(transport.connects).toHaveLength(2)
  })

  it('reconnects from the last id it saw after a drop; a final error (auth, missing thread) stops following', async () => {
    const ctx = setup({ follow: true })
    const { transport } = ctx
    await pause(ctx)
    const first = await transport.waitForConnect(1)
    first.channel.push({ type: 'CUSTOM', name: 'other', value: 1 } as AgUiEvent, '13')
    first.channel.fail(new InterludeError('NETWORK_ERROR', 'dropped'))
    const second = await transport.waitForConnect(2)
    expect(second.lastEventId).toBe('13')
    second.channel.fail(new InterludeError('THREAD_NOT_FOUND', 'gone'))
    await step(second.channel)
    await tick()
    expect(transport.connects).toHaveLength(2)
  })

  it('follow: false never opens a stream', async () => {
    const ctx = setup()
    await pause(ctx)
    await tick()
    expect(ctx.transport.connects).toEqual([])
  })
})

describe('ChatRuntime: deadlines', () => {
  it('a keep batch past its deadline is marked expired; only its all-cancelled close is accepted and sent', async () => {
    const ctx = setup()
    const { rt, transport } = ctx
    const keep = { expiresAt: new Date(T0 + 10).toISOString(), metadata: { onExpiry: 'keep' } }
    const { batch } = await pause(ctx, [approvalInterrupt('i-1', 'call-1', keep)])
    expect(batch.expired).toBeUndefined()
    ctx.clock.now = T0 + 10
    // The runtime's timer (armed for the 10 ms left on its clock) fires before this later, longer one.
    await new Promise((resolve) => setTimeout(resolve, 20))
    const expired = rt.getSnapshot().pendingInterrupts!
    expect(expired).toMatchObject({ id: batch.id, expired: true, interrupts: batch.interrupts })
    expect(codeOf(() => rt.resume(approveAll(expired)))).toBe('INTERRUPT_EXPIRED')
    void rt.resume(cancelAll(expired))
    const close = await transport.waitForRun(2)
    expect(close.input.resume).toEqual([{ interruptId: 'i-1', status: 'cancelled' }])
  })

  it('any other expired batch refuses every answer, the all-cancelled one included', async () => {
    const ctx = setup()
    const { rt } = ctx
    const { batch } = await pause(ctx, twoApprovals({ expiresAt: new Date(T0 - 1).toISOString() }))
    await tick()
    expect(rt.getSnapshot().pendingInterrupts?.expired).toBe(true)
    expect(codeOf(() => rt.resume(cancelAll(batch)))).toBe('INTERRUPT_EXPIRED')
  })
})
