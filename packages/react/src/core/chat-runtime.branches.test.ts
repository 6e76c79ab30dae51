import type { ForkCreated, ForkRequest, Message, ThreadFork, ThreadSnapshot } from '@interlude/protocol'
import { InterludeError } from '@interlude/protocol'
import { describe, expect, it } from 'vitest'
import { ev } from '../test-utils/controllable-transport.ts'
import { setup } from '../test-utils/runtime-setup.ts'
import { flushDeltas } from './chat-runtime.ts'

/** The branch commands over the controllable transport (docs/react-runtime.md#branches); end to end in use-chat.branches.server.test.tsx. */

const history: Message[] = [
  { id: 'u1', role: 'user', content: 'deploy v1' },
  {
    id: 'a1',
    role: 'assistant',
    content: '',
    toolCalls: [{ id: 'c1', type: 'function', function: { name: 'x', arguments: '{}' } }],
  },
  { id: 't1m', role: 'tool', toolCallId: 'c1', content: 'ok' },
  { id: 'a2', role: 'assistant', content: 'done' },
  { id: 'u2', role: 'user', content: 'thanks' },
  { id: 'a3', role: 'assistant', content: 'welcome' },
]

function snapshot(threadId: string, messages: readonly Message[], extra: Partial<ThreadSnapshot> = {}): ThreadSnapshot {
  return {
    threadId,
    revision: 3,
    status: 'idle',
    messages: [...messages],
    state: {},
    lastEventId: 0,
    hasMoreMessages: false,
    messageCount: messages.length,
    ...extra,
  } as ThreadSnapshot
}

function forking(ctx: ReturnType<typeof setup>) {
  const forkCalls: { threadId: string; request: ForkRequest }[] = []
  const forked = new Map<string, ThreadFork[]>()
  let refuse: InterludeError | undefined
  Object.assign(ctx.transport, {
    async fork(threadId: string, request: ForkRequest): Promise<ForkCreated> {
      forkCalls.push({ threadId, request })
      await Promise.resolve()
      if (refuse) throw refuse
      const id = request.threadId!
      const at = request.at as { messageId: string }
      const upTo = history.slice(0, history.findIndex((m) => m.id === at.messageId) + 1)
      const messages = upTo.map((m) => (m.id === request.edit?.messageId ? { ...m, content: request.edit.content } : m))
      ctx.transport.threads.set(id, snapshot(id, messages as Message[], { parent: { threadId, at } }))
      forked.set(threadId, [...(forked.get(threadId) ?? []), { threadId: id, at, createdAt: '2026-12-02T10:00:00Z' }])
      return { threadId: id, parent: { threadId, at } }
    },
    async forks(threadId: string): Promise<readonly ThreadFork[]> {
      return forked.get(threadId) ?? []
    },
  })
  return { forkCalls, refuseWith: (error: InterludeError) => (refuse = error) }
}

describe('ChatRuntime branch commands', () => {
  it('regenerate forks at the user message the answer replies to, then runs the fork’s history there', async () => {
    const ctx = setup({ initialMessages: history })
    const { forkCalls } = forking(ctx)
    const done = ctx.rt.regenerate('a2')
    expect(ctx.rt.getSnapshot().threadId).toBe('t1')
    const call = await ctx.transport.waitForRun(1)
    expect(forkCalls).toEqual([{ threadId: 't1', request: { at: { messageId: 'u1' }, threadId: 'id-1' } }])
    expect(call.input.threadId).toBe('id-1')
    expect(call.input.messages.map((m) => m.id)).toEqual(['u1'])
    expect(ctx.rt.getSnapshot()).toMatchObject({ threadId: 'id-1', isLoading: true })
    expect(ctx.rt.getSnapshot().branches?.points).toEqual([
      { at: { messageId: 'u1' }, threadIds: ['t1', 'id-1'], index: 1 },
    ])
    const { runId } = call.input
    call.channel.pushAll([ev.runStarted('id-1', runId), ev.textStart('n1'), ev.text('n1', 'again'), ev.textEnd('n1')])
    call.channel.push(ev.finished('id-1', runId))
    await done
    flushDeltas(ctx.rt)
    expect(ctx.rt.getSnapshot().messages.map((m) => m.id)).toEqual(['u1', 'n1'])
  })

  it('the default answer is the last one; editMessage edits only user messages', async () => {
    const ctx = setup({ initialMessages: history })
    const { forkCalls } = forking(ctx)
    void ctx.rt.regenerate()
    await ctx.transport.waitForRun(1)
    expect(forkCalls[0]!.request.at).toEqual({ messageId: 'u2' })
    ctx.rt.stop()
    await expect(ctx.rt.editMessage('a1', 'x')).rejects.toMatchObject({ code: 'INVALID_INPUT' })
    await expect(ctx.rt.editMessage('u1', '')).rejects.toMatchObject({ code: 'INVALID_INPUT' })
    // A refused argument released the lock and changed nothing else.
    expect(ctx.rt.getSnapshot()).toMatchObject({ threadId: 'id-1', isLoading: false })
    expect(forkCalls).toHaveLength(1)
  })

  it('a refused fork rejects and changes nothing: same thread, history unlocked, no run sent', async () => {
    const ctx = setup({ initialMessages: history })
    const { refuseWith } = forking(ctx)
    refuseWith(new InterludeError('RATE_LIMITED', 'Too many new threads.'))
    const before = ctx.rt.getSnapshot()
    await expect(ctx.rt.editMessage('u2', 'no thanks')).rejects.toMatchObject({ code: 'RATE_LIMITED' })
    expect(ctx.rt.getSnapshot()).toMatchObject({ threadId: 't1', messages: before.messages, branches: undefined })
    expect(ctx.transport.runs).toEqual([])
    void ctx.rt.sendMessage('still here')
    expect(ctx.rt.getSnapshot().isLoading).toBe(true)
  })

  it('a thread change while the fork is made wins: the command rejects and nothing runs', async () => {
    const ctx = setup({ initialMessages: history })
    forking(ctx)
    const edited = ctx.rt.editMessage('u1', 'deploy v2')
    ctx.rt.setThreadId('elsewhere')
    await expect(edited).rejects.toMatchObject({ code: 'INVALID_STATE', details: { reason: 'busy' } })
    expect(ctx.rt.getSnapshot().threadId).toBe('elsewhere')
    expect(ctx.transport.runs).toEqual([])
  })

  it('a runtime disposed while the fork is made switches to nothing and runs nothing', async () => {
    const ctx = setup({ initialMessages: history })
    forking(ctx)
    const edited = ctx.rt.regenerate()
    ctx.rt.dispose()
    await expect(edited).rejects.toMatchObject({ code: 'INVALID_STATE' })
    expect(ctx.rt.getSnapshot().threadId).toBe('t1')
    expect(ctx.transport.runs).toEqual([])
  })

  it('needs an Interlude server: a transport without forks refuses with NOT_FOUND', () => {
    const ctx = setup({ initialMessages: history })
    expect(() => ctx.rt.regenerate()).toThrow(
      expect.objectContaining({ code: 'NOT_FOUND', details: { reason: 'plain_server' } }),
    )
    expect(ctx.rt.getSnapshot().threadId).toBe('t1')
  })
})
