import { InterludeError } from '@interlude/protocol'
import { describe, expect, it } from 'vitest'
import { ev, step, tick } from '../test-utils/controllable-transport.ts'
import { flushDeltas } from './chat-runtime.ts'
import { approveAll, codeOf, pause, setup, twoApprovals } from '../test-utils/runtime-setup.ts'

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
