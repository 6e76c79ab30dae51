// @vitest-environment jsdom
import type { Message } from '@interlude/protocol'
import { act, cleanup, render, renderHook } from '@testing-library/react'
import { memo, StrictMode, useEffect, type ReactNode } from 'react'
import { hydrateRoot } from 'react-dom/client'
import { renderToString } from 'react-dom/server'
import { afterEach, describe, expect, it } from 'vitest'
import { approvalInterrupt, ControllableTransport, ev, step } from './test-utils/controllable-transport.ts'
import { useChat, type UseChatOptions } from './use-chat.ts'

afterEach(cleanup)

const strict = ({ children }: { children: ReactNode }) => <StrictMode>{children}</StrictMode>

function hook(options: UseChatOptions = {}) {
  const transport = new ControllableTransport()
  let n = 0
  const base: UseChatOptions = {
    transport,
    threadId: 't1',
    generateId: () => `id-${++n}`,
    retry: { attempts: 0 },
    throttleMs: 5,
  }
  const view = renderHook((props: UseChatOptions) => useChat({ ...base, ...props }), {
    wrapper: strict,
    initialProps: options,
  })
  return { transport, view }
}

describe('useChat (StrictMode, controllable transport)', () => {
  it('creates one runtime, sends, pauses, and resumes once on a double click', async () => {
    const { transport, view } = hook()
    const runtime = view.result.current.runtime
    expect(view.result.current).toMatchObject({ threadId: 't1', isLoading: false, messages: [] })
    act(() => void view.result.current.sendMessage('deploy v2'))
    const call = await transport.waitForRun(1)
    expect(transport.runs).toHaveLength(1) // StrictMode does not double-send
    await act(async () => {
      call.channel.pushAll([
        ev.runStarted('t1', call.input.runId),
        ev.interrupted('t1', call.input.runId, [approvalInterrupt('i-1', 'c-1')]),
      ])
      await step(call.channel)
    })
    const batch = view.result.current.pendingInterrupts!
    expect(batch.interrupts[0]!.id).toBe('i-1')
    const answer = {
      batchId: batch.id,
      entries: [{ interruptId: 'i-1', status: 'resolved' as const, payload: { approved: true } }],
    }
    let second: unknown
    act(() => {
      void view.result.current.resume(answer)
      try {
        view.result.current.resume(answer) // the second click of a double click, same tick
      } catch (error) {
        second = error
      }
    })
    expect(second).toMatchObject({ code: 'BATCH_CLAIMED' })
    expect(view.result.current).toMatchObject({ isResuming: true, isLoading: true, pendingInterrupts: batch })
    const resumed = await transport.waitForRun(2)
    await act(async () => {
      resumed.channel.pushAll([ev.runStarted('t1', resumed.input.runId), ev.finished('t1', resumed.input.runId)])
      await step(resumed.channel)
    })
    expect(transport.runs).toHaveLength(2)
    expect(view.result.current).toMatchObject({ isResuming: false, pendingInterrupts: undefined })
    expect(view.result.current.runtime).toBe(runtime)
    expect(view.result.current.resume).toBe(runtime.resume) // forwarded unchanged, stable identity
  })

  it('a different threadId option retires the batch; the same id resets nothing', async () => {
    const { transport, view } = hook()
    act(() => void view.result.current.sendMessage('ask'))
    const call = await transport.waitForRun(1)
    await act(async () => {
      call.channel.pushAll([
        ev.runStarted('t1', call.input.runId),
        ev.interrupted('t1', call.input.runId, [{ id: 'q', reason: 'input_required' }]),
      ])
      await step(call.channel)
    })
    const batch = view.result.current.pendingInterrupts
    view.rerender({ threadId: 't1' })
    expect(view.result.current.pendingInterrupts).toBe(batch)
    view.rerender({ threadId: 't2' })
    expect(view.result.current).toMatchObject({ threadId: 't2', pendingInterrupts: undefined })
    expect(view.result.current.messages.length).toBeGreaterThan(0)
  })

  it('uses the latest callbacks (latest-ref) without recreating the runtime', async () => {
    const seen: string[] = []
    const { transport, view } = hook({ onFinish: () => seen.push('first') })
    view.rerender({ onFinish: () => seen.push('second') })
    act(() => void view.result.current.sendMessage('hi'))
    const call = await transport.waitForRun(1)
    await act(async () => {
      call.channel.pushAll([ev.runStarted('t1', call.input.runId), ev.finished('t1', call.input.runId)])
      await step(call.channel)
    })
    expect(seen).toEqual(['second'])
  })

  it('streams with bounded renders; unchanged message rows do not re-render', async () => {
    const transport = new ControllableTransport()
    const rowRenders = new Map<string, number>()
    const Row = memo(function Row({ message }: { message: Message }) {
      rowRenders.set(message.id, (rowRenders.get(message.id) ?? 0) + 1)
      return <li>{String(message.content ?? '')}</li>
    })
    let chatRenders = 0
    let api: ReturnType<typeof useChat> | undefined
    function Chat() {
      chatRenders++
      const chat = useChat({
        transport,
        threadId: 't1',
        throttleMs: 10,
        initialMessages: [{ id: 'old', role: 'user', content: 'earlier' }],
      })
      api = chat
      return (
        <ul>
          {chat.messages.map((m) => (
            <Row key={m.id} message={m} />
          ))}
        </ul>
      )
    }
    const { container } = render(
      <StrictMode>
        <Chat />
      </StrictMode>,
    )
    act(() => void api!.sendMessage({ id: 'u1', content: 'tell me a story' }))
    const call = await transport.waitForRun(1)
    await act(async () => {
      call.channel.pushAll([ev.runStarted('t1', call.input.runId), ev.textStart('m1')])
      await step(call.channel)
    })
    const oldRowRenders = rowRenders.get('old')
    const rendersBefore = chatRenders
    const DELTAS = 2000
    await act(async () => {
      for (let i = 0; i < DELTAS; i++) call.channel.push(ev.text('m1', i % 2 ? '故事' : '🙂'))
      call.channel.push(ev.finished('t1', call.input.runId))
      await step(call.channel)
    })
    const renders = chatRenders - rendersBefore
    // StrictMode renders twice per commit; 2000 deltas must not mean 2000 commits.
    expect(renders).toBeLessThanOrEqual(2 * 4)
    expect(rowRenders.get('old')).toBe(oldRowRenders)
    expect(container.textContent).toContain('故事🙂'.repeat(3))
    expect((api!.messages[2]!.content as string).length).toBe(DELTAS * 2)
  })
})

describe('useChat hydration', () => {
  it('hydrates server HTML without a mismatch (server snapshot = initial snapshot)', async () => {
    const errors: unknown[] = []
    function App() {
      const chat = useChat({ threadId: 'hydrate-me', initialMessages: [{ id: 'm1', role: 'user', content: 'hi' }] })
      return (
        <p data-thread={chat.threadId} data-loading={String(chat.isLoading)}>
          {chat.messages.map((m) => String(m.content)).join(',')}
        </p>
      )
    }
    const container = document.createElement('div')
    container.innerHTML = renderToString(<App />)
    const root = await act(async () =>
      hydrateRoot(
        container,
        <StrictMode>
          <App />
        </StrictMode>,
        { onRecoverableError: (error) => errors.push(error) },
      ),
    )
    expect(errors).toEqual([])
    expect(container.innerHTML).toBe('<p data-thread="hydrate-me" data-loading="false">hi</p>')
    act(() => root.unmount())
  })
})

describe('useCompletion (StrictMode)', () => {
  it('sends each new input once and defers changes during a pause', async () => {
    const { useCompletion } = await import('./use-completion.ts')
    const transport = new ControllableTransport()
    const view = renderHook(
      ({ input }: { input: string }) => useCompletion(input, { transport, threadId: 't1', retry: { attempts: 0 } }),
      {
        wrapper: strict,
        initialProps: { input: 'A' },
      },
    )
    const first = await transport.waitForRun(1)
    await act(async () => {
      first.channel.pushAll([
        ev.runStarted('t1', first.input.runId),
        ev.interrupted('t1', first.input.runId, [approvalInterrupt('i', 'c')]),
      ])
      await step(first.channel)
    })
    expect(transport.runs).toHaveLength(1) // StrictMode's double effects do not double-send
    view.rerender({ input: 'B' })
    view.rerender({ input: 'C' })
    expect(view.result.current.deferredInput).toBe('C')
    const batch = view.result.current.pendingInterrupts!
    act(
      () =>
        void view.result.current.resume({
          batchId: batch.id,
          entries: [{ interruptId: 'i', status: 'resolved', payload: { approved: true } }],
        }),
    )
    const resumed = await transport.waitForRun(2)
    await act(async () => {
      resumed.channel.pushAll([ev.runStarted('t1', resumed.input.runId), ev.finished('t1', resumed.input.runId)])
      await step(resumed.channel)
    })
    const third = await transport.waitForRun(3)
    expect(third.input.messages.at(-1)).toMatchObject({ role: 'user', content: 'C' })
    expect(view.result.current.deferredInput).toBeUndefined()
  })

  it('recover() from a mount effect in StrictMode: both effect runs share one lookup and resolve', async () => {
    const transport = new ControllableTransport()
    transport.threads.set('t1', {
      threadId: 't1',
      revision: 2,
      status: 'interrupted',
      messages: [],
      state: {},
      interrupts: [approvalInterrupt('i-1', 'c-1')],
      lastEventId: 4,
    })
    let lookups = 0
    const getThread = transport.getThread.bind(transport)
    transport.getThread = (threadId: string) => (lookups++, getThread(threadId))
    const outcomes: string[] = []
    let chat: ReturnType<typeof useChat> | undefined
    function App() {
      chat = useChat({ transport, threadId: 't1', throttleMs: 0 })
      const { recover } = chat
      useEffect(() => {
        recover().then(
          (r) => outcomes.push(`ok ${r.attached}`),
          (e: { code?: string }) => outcomes.push(`rejected ${e.code}`),
        )
      }, [recover])
      return null
    }
    render(
      <StrictMode>
        <App />
      </StrictMode>,
    )
    await act(async () => {
      await new Promise((resolve) => setTimeout(resolve, 10))
    })
    expect(outcomes).toEqual(['ok false', 'ok false'])
    expect(lookups).toBe(1)
    expect(chat!.pendingInterrupts?.interrupts.map((i) => i.id)).toEqual(['i-1'])
  })
})
