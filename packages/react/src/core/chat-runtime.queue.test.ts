/**
 * Many messages, one thread (docs/react-runtime.md#many-messages-one-thread) over a controllable transport, step by
 * step: what a busy send posts and when, `steer` answers, refusals, and how the runtime follows the thread for the
 * next queued run (the real-server behaviour is in chat-runtime.queue.server.test.ts).
 */
import { InterludeError } from '@interlude/protocol'
import { describe, expect, it } from 'vitest'
import { ev, step, tick } from '../test-utils/controllable-transport.ts'
import { approveAll, codeOf, pause, setup } from '../test-utils/runtime-setup.ts'
import { flushDeltas } from './chat-runtime.ts'

/** A first run that is acknowledged and streaming. */
async function streaming(ctx: ReturnType<typeof setup>) {
  void ctx.rt.sendMessage('one')
  const first = await ctx.transport.waitForRun(1)
  first.channel.pushAll([ev.runStarted('t1', first.input.runId), ev.textStart('m-a'), ev.text('m-a', 'Hi')])
  await step(first.channel)
  return first
}

describe('ChatRuntime: sending while busy', () => {
  it('posts only the new message with its strategy, after the running run is acknowledged, one post at a time', async () => {
    const ctx = setup({ whileBusy: 'enqueue', queueStorage: false })
    const { rt, transport } = ctx
    void rt.sendMessage('one')
    const first = await transport.waitForRun(1)
    const two = rt.sendMessage('two')
    await tick()
    expect(transport.submits).toHaveLength(0) // the first run is not admitted yet
    first.channel.push(ev.runStarted('t1', first.input.runId))
    const submit = await transport.waitForSubmit(1)
    expect(submit.input.messages).toEqual([{ id: expect.any(String), role: 'user', content: 'two' }])
    expect(submit.input.forwardedProps).toMatchObject({ interlude: { multitask: 'enqueue' } })
    const three = rt.sendMessage('three')
    await tick()
    expect(transport.submits).toHaveLength(1) // in typing order
    submit.answer({ queued: 1 })
    await two
    ;(await transport.waitForSubmit(2)).answer({ queued: 2 })
    await three
    expect(rt.getSnapshot().queued.map((q) => [q.position, q.text, q.runId])).toEqual([
      [1, 'two', submit.input.runId],
      [2, 'three', transport.submits[1]!.input.runId],
    ])
    expect(rt.getSnapshot().messages.map((m) => m.content)).toEqual(['one'])
  })

  it('a refusal rejects with the server error and the message leaves queued; nothing else changes', async () => {
    const ctx = setup({ queueStorage: false })
    await streaming(ctx)
    const sent = ctx.rt.sendMessage('two', { whileBusy: 'enqueue' })
    expect(ctx.rt.getSnapshot().queued).toHaveLength(1)
    ;(await ctx.transport.waitForSubmit(1)).refuse(new InterludeError('RATE_LIMITED', 'Too many runs.'))
    await expect(sent).rejects.toMatchObject({ code: 'RATE_LIMITED' })
    expect(ctx.rt.getSnapshot()).toMatchObject({ queued: [], status: 'streaming', error: undefined })
  })

  it('steer: the message joins the history at once; the turn writing it again converges on the same message', async () => {
    const ctx = setup({ queueStorage: false })
    const first = await streaming(ctx)
    const steered = ctx.rt.sendMessage('use staging', { whileBusy: 'steer' })
    const submit = await ctx.transport.waitForSubmit(1)
    expect(submit.input.forwardedProps).toMatchObject({ interlude: { multitask: 'steer' } })
    submit.answer({ steered: true })
    await steered
    const { id } = submit.input.messages[0]!
    expect(ctx.rt.getSnapshot().queued).toEqual([])
    expect(ctx.rt.getSnapshot().messages.map((m) => m.content)).toEqual(['one', 'Hi', 'use staging'])
    first.channel.pushAll([
      ev.textEnd('m-a'),
      { type: 'TEXT_MESSAGE_START', messageId: id, role: 'user' } as never,
      { type: 'TEXT_MESSAGE_CONTENT', messageId: id, delta: 'use staging' } as never,
      { type: 'TEXT_MESSAGE_END', messageId: id } as never,
      ev.textStart('m-b'),
      ev.text('m-b', 'Staging it is.'),
      ev.textEnd('m-b'),
      ev.finished('t1', first.input.runId),
    ])
    await step(first.channel)
    expect(ctx.rt.getSnapshot().messages.map((m) => m.content)).toEqual(['one', 'Hi', 'use staging', 'Staging it is.'])
  })

  it('a steer the run ended without taking waits as queued input; the run that writes it takes it out', async () => {
    const ctx = setup({ queueStorage: false })
    const { rt, transport } = ctx
    const first = await streaming(ctx)
    const steered = rt.sendMessage('late words', { whileBusy: 'steer' })
    ;(await transport.waitForSubmit(1)).answer({ steered: true })
    await steered
    const { id } = transport.submits[0]!.input.messages[0]!
    first.channel.pushAll([ev.textEnd('m-a'), ev.finished('t1', first.input.runId)])
    await step(first.channel)
    // No turn wrote it: it is queued input now, and the runtime waits for the run that takes it.
    expect(rt.getSnapshot().queued.map((q) => [q.position, q.text])).toEqual([[1, 'late words']])
    expect(rt.getSnapshot().messages.some((m) => m.id === id)).toBe(false)
    const follow = await transport.waitForConnect(1)
    follow.channel.pushAll([
      ev.runStarted('t1', 'run-next'),
      { type: 'TEXT_MESSAGE_START', messageId: id, role: 'user' } as never,
      { type: 'TEXT_MESSAGE_CONTENT', messageId: id, delta: 'late words' } as never,
      { type: 'TEXT_MESSAGE_END', messageId: id } as never,
    ])
    await step(follow.channel)
    flushDeltas(rt) // content commits with the next coalesced commit
    const s = rt.getSnapshot()
    expect(s.queued).toEqual([])
    expect(s.messages.filter((m) => m.id === id)).toHaveLength(1)
    follow.channel.push(ev.finished('t1', 'run-next'))
    await step(follow.channel)
    expect(rt.getSnapshot()).toMatchObject({ isLoading: false, queued: [] })
  })

  it('when the run ends, follows the thread (?follow=1) from its last event for the next run; earlier entries leave', async () => {
    const ctx = setup({ whileBusy: 'enqueue', queueStorage: false })
    const { rt, transport } = ctx
    const first = await streaming(ctx)
    for (const text of ['two', 'three', 'four']) {
      const sent = rt.sendMessage(text)
      ;(await transport.waitForSubmit(transport.submits.length + 1)).answer({ queued: 1 })
      await sent
    }
    const [two, three] = transport.submits.map((s) => s.input.runId)
    first.channel.pushAll([ev.textEnd('m-a'), ev.finished('t1', first.input.runId)])
    await step(first.channel)
    const follow = await transport.waitForConnect(1)
    expect(follow).toMatchObject({ stay: true, lastEventId: '5' }) // the first run's RUN_FINISHED
    expect(rt.getSnapshot()).toMatchObject({ status: 'submitted', isLoading: true })
    // 'two' was cancelled elsewhere: the next run to start is 'three'.
    follow.channel.pushAll([ev.runStarted('t1', three!), ev.textStart('m-3'), ev.text('m-3', 'Three.')])
    await step(follow.channel)
    const s = rt.getSnapshot()
    expect(s.queued.map((q) => [q.position, q.text])).toEqual([[1, 'four']])
    expect(s.messages.map((m) => m.content)).toEqual(['one', 'Hi', 'three'])
    expect(s).toMatchObject({ status: 'streaming', runId: three })
    expect(two).not.toBe(three)
    follow.channel.push(ev.finished('t1', three!))
    await step(follow.channel)
    expect(s.messages.map((m) => m.content)).not.toContain('two')
    const next = await transport.waitForConnect(2)
    expect(next.lastEventId).toBe(String(Number(follow.lastEventId) + 4))
  })

  it('refusals: a cancel of a runId that is not queued; whileBusy while a batch is pending; interrupting a resume', async () => {
    const ctx = setup({ whileBusy: 'enqueue', queueStorage: false })
    await streaming(ctx)
    expect(codeOf(() => ctx.rt.cancelQueued('nope'))).toBe('RUN_NOT_FOUND')
    ctx.rt.stop()
    const { call, batch } = await pause(ctx)
    expect(codeOf(() => ctx.rt.sendMessage('two'))).toBe('INVALID_STATE')
    void ctx.rt.resume(approveAll(batch))
    const resumed = await ctx.transport.waitForRun(3)
    resumed.channel.push(ev.runStarted('t1', resumed.input.runId))
    await step(resumed.channel)
    // A resumed turn takes queued messages, but is not interrupted from here.
    expect(codeOf(() => ctx.rt.sendMessage('two', { whileBusy: 'interrupt' }))).toBe('INVALID_STATE')
    void ctx.rt.sendMessage('three')
    expect(ctx.rt.getSnapshot().queued.map((q) => q.text)).toEqual(['three'])
    expect(call.input.runId).not.toBe(resumed.input.runId)
  })
})
