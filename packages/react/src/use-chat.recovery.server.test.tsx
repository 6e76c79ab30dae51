// @vitest-environment jsdom
/**
 * Recovery paths of useChat against the real agent server (scripted model, SQLite in a temp dir,
 * 127.0.0.1, <StrictMode>): a page reload (a new runtime on the same thread) + recover(), a
 * connection dropped after acknowledgement, and a server restart while paused.
 */
import { startServer, threadKey, type RunningServer } from '@interlude/agent-server'
import type { Message, ThreadSnapshot } from '@interlude/protocol'
import { act, cleanup, renderHook, waitFor } from '@testing-library/react'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { StrictMode, useState, type ReactNode } from 'react'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { useChat, type UseChatOptions, type UseChatResult } from './use-chat.ts'
import { useEarlierMessages } from './use-earlier-messages.ts'
import { droppingFetch } from './test-utils/dropping-fetch.ts'
import { approveAll as approveEntries } from './test-utils/runtime-setup.ts'

const TOKEN = 'bob-token'
const headers = { Authorization: `Bearer ${TOKEN}` }
let dir: string
let server: RunningServer
let seq = 0

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'interlude-react-recovery-'))
  server = await startServer({ dbPath: join(dir, 'agent.db'), tokens: { bob: TOKEN } })
})
afterAll(async () => {
  await server.close()
  rmSync(dir, { recursive: true, force: true })
})
afterEach(cleanup)

const strict = ({ children }: { children: ReactNode }) => <StrictMode>{children}</StrictMode>
const thread = () => `recovery-${process.pid}-${++seq}`

function mount(options: UseChatOptions & { threadId: string }, base = server.baseUrl) {
  return renderHook((props: UseChatOptions) => useChat({ api: base, headers, throttleMs: 0, ...props }), {
    wrapper: strict,
    initialProps: options,
  })
}

const assistantText = (messages: readonly Message[]) =>
  messages
    .filter((m) => m.role === 'assistant')
    .map((m) => (typeof m.content === 'string' ? m.content : ''))
    .join('|')

async function pause(result: { current: UseChatResult }) {
  act(() => void result.current.sendMessage('deploy v4.2 to production'))
  await waitFor(() => expect(result.current.pendingInterrupts).toBeDefined())
  return result.current.pendingInterrupts!
}

function approveAll(result: { current: UseChatResult }) {
  act(() => void result.current.resume(approveEntries(result.current.pendingInterrupts!)))
}

describe('useChat: a long thread restores its newest page and goes on from it', () => {
  let paged: RunningServer
  beforeAll(async () => {
    // Pages of a few messages (the newest message of a page is always included, whatever its size).
    paged = await startServer({
      dbPath: join(dir, 'paged.db'),
      tokens: { bob: TOKEN },
      limits: { snapshotPageBytes: 600 },
    })
  })
  afterAll(async () => {
    await paged.close()
  })

  it('recover() installs the newest page (the snapshot says more is older); the batch is answered and the thread goes on', async () => {
    const threadId = thread()
    const first = mount({ threadId }, paged.baseUrl)
    for (const text of ['hello', 'what can you do?', 'thanks']) {
      await act(() => first.result.current.sendMessage(text))
      expect(first.result.current.error).toBeUndefined()
    }
    await pause(first.result)
    const all = first.result.current.messages.map((m) => m.id)
    first.unmount()

    const second = mount({ threadId }, paged.baseUrl)
    let snapshot: ThreadSnapshot | undefined
    await act(async () => {
      snapshot = (await second.result.current.recover()).snapshot
    })
    expect(snapshot).toMatchObject({ hasMoreMessages: true, messageCount: all.length })
    expect(typeof snapshot?.messagesCursor).toBe('string')
    const page = second.result.current.messages.map((m) => m.id)
    expect(page.length).toBeLessThan(all.length)
    expect(page).toEqual(all.slice(all.length - page.length))
    // The batch of the restored page is answered: the resume executes once.
    approveAll(second.result)
    await waitFor(() => expect(second.result.current.isResuming).toBe(false))
    expect(second.result.current.error).toBeUndefined()
    expect(second.result.current.state).toMatchObject({
      deployments: [expect.objectContaining({ version: 'v4.2', environment: 'production' })],
    })
    await act(() => second.result.current.sendMessage('one more'))
    expect(second.result.current.error).toBeUndefined()
    // The server kept the whole history and added only the new messages.
    const after = (await (await fetch(`${paged.baseUrl}/threads/${threadId}`, { headers })).json()) as ThreadSnapshot
    expect(after.messageCount).toBe(all.length + second.result.current.messages.length - page.length)
  })

  it('useEarlierMessages beside useChat reads the older pages back, in order, through the same endpoints and headers', async () => {
    const threadId = thread()
    const first = mount({ threadId }, paged.baseUrl)
    for (const text of ['hello', 'what can you do?', 'thanks', 'and then?', 'really?', 'bye']) {
      await act(() => first.result.current.sendMessage(text))
      expect(first.result.current.error).toBeUndefined()
    }
    const all = first.result.current.messages.map((m) => m.id)
    first.unmount()

    const { result } = renderHook(
      () => {
        const chat = useChat({ api: paged.baseUrl, headers, throttleMs: 0, threadId })
        const [snapshot, setSnapshot] = useState<ThreadSnapshot>()
        const earlier = useEarlierMessages(chat.runtime, snapshot)
        return { chat, earlier, setSnapshot }
      },
      { wrapper: strict },
    )
    await act(async () => {
      result.current.setSnapshot((await result.current.chat.recover()).snapshot)
    })
    expect(result.current.earlier).toMatchObject({ hasMore: true, messages: [] })
    let reads = 0
    while (result.current.earlier.hasMore) {
      // A double click: one request, one page.
      await act(async () => {
        await Promise.all([result.current.earlier.loadMore(), result.current.earlier.loadMore()])
      })
      expect(result.current.earlier.error).toBeUndefined()
      reads += 1
      expect(reads).toBeLessThan(all.length)
    }
    expect(reads).toBeGreaterThanOrEqual(2)
    const shown = [...result.current.earlier.messages, ...result.current.chat.messages].map((m) => m.id)
    expect(shown).toEqual(all)
  })
})

describe('useChat recovery against the agent server', () => {
  it('a reload (new runtime on the same thread) + recover() brings back the pending batch, which can be answered', async () => {
    const threadId = thread()
    const first = mount({ threadId })
    const original = await pause(first.result)
    first.unmount()

    const second = mount({ threadId })
    expect(second.result.current).toMatchObject({ messages: [], pendingInterrupts: undefined })
    let attached: boolean | undefined
    await act(async () => {
      attached = (await second.result.current.recover()).attached
    })
    expect(attached).toBe(false)
    const restored = second.result.current.pendingInterrupts!
    expect(restored.id).not.toBe(original.id) // fresh local ownership
    expect(restored.interrupts.map((i) => i.id)).toEqual(original.interrupts.map((i) => i.id))
    expect(assistantText(second.result.current.messages)).toContain('Plan: publish release v4.2')
    approveAll(second.result)
    await waitFor(() => expect(second.result.current.isResuming).toBe(false))
    expect(second.result.current.error).toBeUndefined()
    expect(second.result.current.state).toMatchObject({
      deployments: [expect.objectContaining({ version: 'v4.2', environment: 'production' })],
    })
  })

  it('a connection dropped after acknowledgement heals through the events route without duplicated text', async () => {
    const clean = mount({ threadId: thread() })
    act(() => void clean.result.current.sendMessage('hello there'))
    await waitFor(() => expect(clean.result.current.isLoading).toBe(false))
    const expected = assistantText(clean.result.current.messages)
    expect(expected.length).toBeGreaterThan(20)

    const dropping = droppingFetch(server.baseUrl, 4) // RUN_STARTED, TEXT_MESSAGE_START and two deltas, then half a frame
    const { result } = mount({
      threadId: thread(),
      fetch: dropping.fetch,
      reconnect: { attempts: 3, delayMs: () => 0 },
    })
    act(() => void result.current.sendMessage('hello there'))
    await waitFor(() => expect(result.current.isLoading).toBe(false))
    expect(result.current.error).toBeUndefined()
    expect(assistantText(result.current.messages)).toBe(expected)
    expect(dropping.requests.filter((r) => r.startsWith('POST'))).toHaveLength(1) // never re-sent
    expect(dropping.requests.some((r) => r.startsWith('GET') && r.includes('/events'))).toBe(true)
  })

  it('a resume whose connection drops after acknowledgement heals through the events route with identical text', async () => {
    // Reference: the same resume, undisturbed, on another thread.
    const clean = mount({ threadId: thread() })
    await pause(clean.result)
    approveAll(clean.result)
    await waitFor(() => expect(clean.result.current.isResuming).toBe(false))
    expect(clean.result.current.error).toBeUndefined()
    const expected = assistantText(clean.result.current.messages)
    expect(expected).toContain('All steps ran.')

    const dropping = droppingFetch(server.baseUrl, 3, { resumeOnly: true }) // RUN_STARTED and two more frames, then half a frame
    const { result } = mount({
      threadId: thread(),
      fetch: dropping.fetch,
      reconnect: { attempts: 3, delayMs: () => 0 },
    })
    await pause(result)
    approveAll(result)
    await waitFor(() => expect(result.current.isResuming).toBe(false))
    expect(result.current).toMatchObject({
      error: undefined,
      pendingInterrupts: undefined,
      recovery: { required: false },
    })
    // Identical to what the server stored for this thread, and to the reference up to the tool-call ids.
    const stored = (await (
      await globalThis.fetch(`${server.baseUrl}/threads/${encodeURIComponent(result.current.threadId)}`, { headers })
    ).json()) as ThreadSnapshot
    expect(assistantText(result.current.messages)).toBe(assistantText(stored.messages))
    const withoutIds = (text: string) => text.replace(/call_[0-9a-f-]+/g, 'call_*')
    expect(withoutIds(assistantText(result.current.messages))).toBe(withoutIds(expected))
    expect(result.current.messages.map((m) => m.role)).toEqual(clean.result.current.messages.map((m) => m.role)) // nothing duplicated
    expect(result.current.state).toEqual(stored.state)
    expect(dropping.requests.filter((r) => r.endsWith('(resume)'))).toHaveLength(1) // the resume is never re-sent
    expect(dropping.requests.some((r) => r.startsWith('GET') && r.includes('/events'))).toBe(true)
  })

  it('two tabs, same decision: the second joins the first run (ALREADY_RESUMED); a different decision is a DECISION_CONFLICT', async () => {
    const threadId = thread()
    const tabA = mount({ threadId })
    await pause(tabA.result)
    // Tabs that do not follow the thread (`follow: false`) learn of tab A's decision only when they answer.
    const tabB = mount({ threadId, follow: false })
    const tabC = mount({ threadId, follow: false })
    await act(async () => void (await tabB.result.current.recover()))
    await act(async () => void (await tabC.result.current.recover()))
    approveAll(tabA.result)
    await waitFor(() => expect(tabA.result.current.isResuming).toBe(false))
    expect(tabA.result.current.error).toBeUndefined()

    // Tab B still shows its restored batch and answers it identically: it joins tab A's run.
    approveAll(tabB.result)
    await waitFor(() => expect(tabB.result.current.isResuming).toBe(false))
    expect(tabB.result.current.error).toBeUndefined()
    expect(tabB.result.current.pendingInterrupts).toBeUndefined()
    expect(assistantText(tabB.result.current.messages)).toContain('All steps ran.')
    expect(tabB.result.current.state).toEqual(tabA.result.current.state)

    // Tab C answers differently: refused before any stream, the claim is released.
    const batch = tabC.result.current.pendingInterrupts!
    act(
      () =>
        void tabC.result.current.resume({
          batchId: batch.id,
          entries: batch.interrupts.map((i) => ({ interruptId: i.id, status: 'cancelled' as const })),
        }),
    )
    await waitFor(() => expect(tabC.result.current.isResuming).toBe(false))
    expect(tabC.result.current).toMatchObject({
      error: { code: 'DECISION_CONFLICT' },
      pendingInterrupts: batch,
      recovery: { required: false },
    })
    // The way forward is the server's view: the batch is gone there.
    await act(async () => void (await tabC.result.current.recover()))
    expect(tabC.result.current).toMatchObject({ pendingInterrupts: undefined, error: undefined })
  })

  it('recover() on a running thread re-attaches to its live events', async () => {
    const own = mkdtempSync(join(tmpdir(), 'interlude-react-attach-'))
    const paced = await startServer({ dbPath: join(own, 'agent.db'), tokens: { bob: TOKEN }, pacingMs: 15 })
    try {
      const threadId = thread()
      const tabA = mount({ threadId }, paced.baseUrl)
      act(() => void tabA.result.current.sendMessage('hello, what can you do?'))
      await waitFor(() => expect(tabA.result.current.status).toBe('streaming'))
      const tabB = mount({ threadId }, paced.baseUrl)
      let attached: boolean | undefined
      await act(async () => {
        attached = (await tabB.result.current.recover()).attached
      })
      expect(attached).toBe(true)
      expect(tabB.result.current.isLoading).toBe(true)
      await waitFor(() => expect(tabA.result.current.isLoading).toBe(false))
      await waitFor(() => expect(tabB.result.current.isLoading).toBe(false))
      expect(tabB.result.current.error).toBeUndefined()
      expect(assistantText(tabB.result.current.messages)).toBe(assistantText(tabA.result.current.messages))
    } finally {
      await paced.close()
      rmSync(own, { recursive: true, force: true })
    }
  })

  it('stop() after acknowledgement cancels the run on the server and requires recovery; recover() gets out of it', async () => {
    const own = mkdtempSync(join(tmpdir(), 'interlude-react-stop-'))
    const paced = await startServer({ dbPath: join(own, 'agent.db'), tokens: { bob: TOKEN }, pacingMs: 20 })
    const cancels: number[] = []
    const fetchImpl: typeof fetch = async (input, init) => {
      const res = await globalThis.fetch(input, init)
      if (String(input).endsWith('/cancel')) cancels.push(res.status)
      return res
    }
    try {
      const { result } = mount({ threadId: thread(), fetch: fetchImpl }, paced.baseUrl)
      await pause(result)
      approveAll(result)
      await waitFor(() => expect(result.current.status).toBe('streaming'))
      act(() => result.current.stop())
      expect(result.current).toMatchObject({ isLoading: false, isResuming: false, recovery: { required: true } })
      expect(() => result.current.sendMessage('next')).toThrow(expect.objectContaining({ code: 'RECOVERY_REQUIRED' }))
      await waitFor(() => expect(cancels).toHaveLength(1))
      expect(cancels[0]).toBeLessThan(300)
      // Wait for the server to settle the cancelled run, then install its view.
      await waitFor(async () =>
        expect((await paced.store.getThread(threadKey('bob', result.current.threadId)))?.activeRunId).toBeUndefined(),
      )
      await act(async () => void (await result.current.recover()))
      expect(result.current).toMatchObject({ recovery: { required: false }, error: undefined, isLoading: false })
      act(() => void result.current.sendMessage('hello again'))
      await waitFor(() => expect(result.current.isLoading).toBe(false))
      expect(result.current.error).toBeUndefined()
    } finally {
      await paced.close()
      rmSync(own, { recursive: true, force: true })
    }
  })

  it('a server restart while paused, then recover(), then resume', async () => {
    const own = mkdtempSync(join(tmpdir(), 'interlude-react-restart-'))
    const dbPath = join(own, 'agent.db')
    let srv = await startServer({ dbPath, tokens: { bob: TOKEN } })
    try {
      const threadId = thread()
      const before = mount({ threadId }, srv.baseUrl)
      const batch = await pause(before.result)
      before.unmount()
      await srv.close()
      srv = await startServer({ dbPath, tokens: { bob: TOKEN } })

      const after = mount({ threadId }, srv.baseUrl)
      await act(async () => void (await after.result.current.recover()))
      expect(after.result.current.pendingInterrupts?.interrupts.map((i) => i.id)).toEqual(
        batch.interrupts.map((i) => i.id),
      )
      approveAll(after.result)
      await waitFor(() => expect(after.result.current.isResuming).toBe(false))
      expect(after.result.current.error).toBeUndefined()
      expect(assistantText(after.result.current.messages)).toContain('All steps ran.')
    } finally {
      await srv.close()
      rmSync(own, { recursive: true, force: true })
    }
  })

  it('a server restart while paused: the same runtime resumes on the new address, directly and via recover()', async () => {
    const own = mkdtempSync(join(tmpdir(), 'interlude-react-restart-same-'))
    const dbPath = join(own, 'agent.db')
    let srv = await startServer({ dbPath, tokens: { bob: TOKEN } })
    try {
      // startServer has no abrupt stop; close() is graceful (nothing is running while paused anyway).
      const direct = mount({ threadId: thread() }, srv.baseUrl)
      const viaRecover = mount({ threadId: thread() }, srv.baseUrl)
      const directBatch = await pause(direct.result)
      const recoverBatch = await pause(viaRecover.result)
      await srv.close()
      srv = await startServer({ dbPath, tokens: { bob: TOKEN } }) // same db file, a new port
      direct.rerender({ threadId: direct.result.current.threadId, api: srv.baseUrl })
      viaRecover.rerender({ threadId: viaRecover.result.current.threadId, api: srv.baseUrl })

      // Directly: the local batch still answers the durable server batch.
      expect(direct.result.current.pendingInterrupts).toBe(directBatch)
      approveAll(direct.result)
      await waitFor(() => expect(direct.result.current.isResuming).toBe(false))
      expect(direct.result.current).toMatchObject({ error: undefined, pendingInterrupts: undefined })
      expect(assistantText(direct.result.current.messages)).toContain('All steps ran.')

      // Via recover(): the server's view replaces the local one with a fresh local batch.
      await act(async () => void (await viaRecover.result.current.recover()))
      const restored = viaRecover.result.current.pendingInterrupts!
      expect(restored.id).not.toBe(recoverBatch.id)
      expect(restored.interrupts.map((i) => i.id)).toEqual(recoverBatch.interrupts.map((i) => i.id))
      approveAll(viaRecover.result)
      await waitFor(() => expect(viaRecover.result.current.isResuming).toBe(false))
      expect(viaRecover.result.current).toMatchObject({ error: undefined, pendingInterrupts: undefined })
      expect(assistantText(viaRecover.result.current.messages)).toContain('All steps ran.')
      expect(viaRecover.result.current.state).toMatchObject({
        deployments: [expect.objectContaining({ version: 'v4.2', environment: 'production' })],
      })
    } finally {
      await srv.close()
      rmSync(own, { recursive: true, force: true })
    }
  })
})
