// @vitest-environment jsdom
/**
 * Time travel in useChat (docs/react-runtime.md#branches) against the real agent server on 127.0.0.1, in
 * <StrictMode>: `editMessage` and `regenerate` fork and run on the fork, the parent never changes (its snapshot read
 * through the server before and after), `switchBranch` goes back and forth, and a reload on the fork recovers it.
 */
import { startServer, type RunningServer } from '@interlude/agent-server'
import type { Message, ThreadSnapshot } from '@interlude/protocol'
import { InterludeError } from '@interlude/protocol'
import { act, cleanup, renderHook, waitFor } from '@testing-library/react'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { StrictMode, useEffect, type ReactNode } from 'react'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { useChat, type UseChatResult } from './use-chat.ts'

const TOKEN = 'dora-token-0123456789'
let dir: string
let server: RunningServer
let threadSeq = 0

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'interlude-react-branches-'))
  server = await startServer({ dbPath: join(dir, 'agent.db'), tokens: { dora: TOKEN } })
})
afterAll(async () => {
  await server.close()
  rmSync(dir, { recursive: true, force: true })
})
afterEach(cleanup)

const strict = ({ children }: { children: ReactNode }) => <StrictMode>{children}</StrictMode>
const auth = { Authorization: `Bearer ${TOKEN}` }
const DEFAULT_ANSWER = /^I can publish and deploy releases/

/** The recipe of the README: the active thread id is kept (here in a Map) and recovered on mount. */
const storage = new Map<string, string>()
function useBranchingChat(threadId: string) {
  const chat = useChat({ api: server.baseUrl, headers: auth, threadId, throttleMs: 0 })
  const { recover, loadBranches } = chat
  useEffect(() => {
    recover()
      .then(() => loadBranches())
      .catch((error: unknown) => {
        if (!(InterludeError.isInstance(error) && error.code === 'THREAD_NOT_FOUND')) throw error
      })
  }, [recover, loadBranches])
  useEffect(() => void storage.set('thread', chat.threadId), [chat.threadId])
  return chat
}

function mount(threadId = `branches-${process.pid}-${++threadSeq}`) {
  return renderHook(() => useBranchingChat(threadId), { wrapper: strict })
}

async function serverThread(threadId: string): Promise<ThreadSnapshot> {
  const res = await fetch(`${server.baseUrl}/threads/${encodeURIComponent(threadId)}`, { headers: auth })
  expect(res.status).toBe(200)
  return (await res.json()) as ThreadSnapshot
}

const texts = (messages: readonly Message[]) =>
  messages.filter((m) => m.role === 'user' || m.role === 'assistant').map((m) => [m.role, m.content])

async function said(result: { current: UseChatResult }, text: string): Promise<void> {
  act(() => void result.current.sendMessage(text))
  await waitFor(() => expect(result.current.status).toBe('idle'))
  expect(result.current.error).toBeUndefined()
}

describe('useChat branches', () => {
  it('editMessage forks at the user message and runs there; the parent is never written', async () => {
    const { result } = mount()
    await said(result, 'hello')
    const parentId = result.current.threadId
    const question = result.current.messages[0]!
    const before = await serverThread(parentId)

    act(() => void result.current.editMessage(question.id, 'deploy v7 to staging'))
    await waitFor(() => expect(result.current.pendingInterrupts).toBeDefined())
    const forkId = result.current.threadId
    expect(forkId).not.toBe(parentId)
    expect(result.current.messages[0]).toMatchObject({ id: question.id, role: 'user', content: 'deploy v7 to staging' })
    expect(texts(result.current.messages)).toEqual([
      ['user', 'deploy v7 to staging'],
      ['assistant', 'Plan: publish release v7, then deploy v7 to staging. Both steps need your approval.'],
    ])
    expect(result.current.branches).toEqual({
      threadId: forkId,
      parent: { threadId: parentId, at: { messageId: question.id } },
      points: [{ at: { messageId: question.id }, threadIds: [parentId, forkId], index: 1 }],
    })
    expect(storage.get('thread')).toBe(forkId)

    // The fork's batch is answered on the fork; the parent's log, history and revision are untouched.
    const batch = result.current.pendingInterrupts!
    act(
      () =>
        void result.current.resume({
          batchId: batch.id,
          entries: batch.interrupts.map((i) => ({ interruptId: i.id, status: 'cancelled' as const })),
        }),
    )
    await waitFor(() => expect(result.current.isResuming).toBe(false))
    expect(result.current.error).toBeUndefined()
    const forkOnServer = await serverThread(forkId)
    expect(forkOnServer.parent).toEqual({ threadId: parentId, at: { messageId: question.id } })
    expect(texts(forkOnServer.messages)).toEqual(texts(result.current.messages))
    expect(await serverThread(parentId)).toEqual(before)
  })

  it('regenerate forks before the last answer and answers the same question again', async () => {
    const { result } = mount()
    await said(result, 'hello')
    const parentId = result.current.threadId
    const [question, answer] = result.current.messages
    const before = await serverThread(parentId)

    await act(() => result.current.regenerate())
    const forkId = result.current.threadId
    expect(forkId).not.toBe(parentId)
    expect(result.current.error).toBeUndefined()
    const [copied, regenerated, ...rest] = result.current.messages
    expect(rest).toEqual([])
    expect(copied).toEqual(question)
    expect(regenerated).toMatchObject({ role: 'assistant', content: expect.stringMatching(DEFAULT_ANSWER) })
    expect(regenerated!.id).not.toBe(answer!.id)
    expect(result.current.branches?.points).toEqual([
      { at: { messageId: question!.id }, threadIds: [parentId, forkId], index: 1 },
    ])
    expect(await serverThread(parentId)).toEqual(before)
  })

  it('switchBranch goes back and forth; each branch shows exactly its own messages', async () => {
    const { result } = mount()
    await said(result, 'hello')
    const parentId = result.current.threadId
    const parentMessages = result.current.messages
    const question = parentMessages[0]!
    await act(() => result.current.editMessage(question.id, 'please ask me which environment'))
    const editId = result.current.threadId
    const editMessages = result.current.messages
    expect(texts(editMessages)).toEqual([
      ['user', 'please ask me which environment'],
      ['assistant', 'Let me ask which environment you want.'],
    ])
    expect(result.current.pendingInterrupts).toBeDefined()
    const before = await serverThread(parentId)

    // Back to the parent while the fork's batch waits: it is the fork's, it comes back with the fork.
    await act(() => result.current.switchBranch(parentId))
    expect(result.current).toMatchObject({ threadId: parentId, messages: parentMessages, pendingInterrupts: undefined })
    expect(result.current.branches).toEqual({
      threadId: parentId,
      parent: undefined,
      points: [{ at: { messageId: question.id }, threadIds: [parentId, editId], index: 0 }],
    })
    // A second branch from the parent: regenerate its answer.
    await act(() => result.current.regenerate())
    const regenId = result.current.threadId
    expect(texts(result.current.messages)).toEqual(texts(parentMessages))
    expect(result.current.branches?.points).toEqual([
      { at: { messageId: question.id }, threadIds: [parentId, editId, regenId], index: 2 },
    ])

    await act(() => result.current.switchBranch(editId))
    expect(result.current.threadId).toBe(editId)
    expect(texts(result.current.messages)).toEqual(texts(editMessages))
    expect(result.current.pendingInterrupts?.interrupts).toHaveLength(1)
    expect(result.current.branches?.points[0]).toMatchObject({ threadIds: [parentId, editId, regenId], index: 1 })

    await act(() => result.current.switchBranch(parentId))
    expect(texts(result.current.messages)).toEqual(texts(parentMessages))
    expect(result.current.messages.map((m) => m.id)).toEqual(parentMessages.map((m) => m.id))
    expect(await serverThread(parentId)).toEqual(before)
  })

  it('a reload on the fork recovers the fork and its tree', async () => {
    const first = mount()
    await said(first.result, 'hello')
    const parentId = first.result.current.threadId
    const question = first.result.current.messages[0]!
    await act(() => first.result.current.editMessage(question.id, 'what can you do?'))
    const forkId = first.result.current.threadId
    const forkMessages = first.result.current.messages
    first.unmount()

    // The page keeps the active thread id, as it kept the thread id before (README: reload recipe).
    expect(storage.get('thread')).toBe(forkId)
    const second = mount(storage.get('thread'))
    await waitFor(() => expect(second.result.current.branches).toBeDefined())
    expect(second.result.current.threadId).toBe(forkId)
    expect(texts(second.result.current.messages)).toEqual(texts(forkMessages))
    expect(second.result.current.messages[0]).toMatchObject({ id: question.id, content: 'what can you do?' })
    expect(second.result.current.branches?.parent).toEqual({ threadId: parentId, at: { messageId: question.id } })
    await act(() => second.result.current.switchBranch(parentId))
    expect(second.result.current.messages[0]).toMatchObject({ id: question.id, content: 'hello' })
  })

  it('refuses while a batch is pending, while another branch command is in flight, and what is no branch', async () => {
    const { result } = mount()
    await said(result, 'hello')
    const [question, answer] = result.current.messages
    const code = (fn: () => unknown) => {
      try {
        fn()
      } catch (error) {
        return [(error as InterludeError).code, (error as InterludeError).details]
      }
      return 'no refusal'
    }
    // Arguments are checked by the lazily loaded module: a rejection, and nothing changed.
    await expect(result.current.editMessage(answer!.id, 'x')).rejects.toMatchObject({
      code: 'INVALID_INPUT',
      details: { messageId: answer!.id },
    })
    await expect(result.current.regenerate(question!.id)).rejects.toMatchObject({ code: 'INVALID_INPUT' })
    await expect(result.current.switchBranch('nowhere')).rejects.toMatchObject({
      code: 'INVALID_STATE',
      details: { reason: 'no_branches' },
    })
    await act(() => result.current.loadBranches().then(() => undefined))
    await expect(result.current.switchBranch('nowhere')).rejects.toMatchObject({ code: 'INVALID_INPUT' })
    expect(result.current).toMatchObject({ messages: [question, answer], isLoading: false })

    let edited!: Promise<void>
    act(() => void (edited = result.current.editMessage(question!.id, 'deploy v8 to staging')))
    // The fork is being made: the history is locked, nothing was sent to the parent.
    expect(code(() => result.current.regenerate())).toEqual(['INVALID_STATE', { reason: 'branching' }])
    expect(code(() => result.current.sendMessage('more'))).toEqual(['INVALID_STATE', { reason: 'branching' }])
    await waitFor(() => expect(result.current.pendingInterrupts).toBeDefined())
    await act(() => edited.then(() => undefined))
    expect(code(() => result.current.editMessage(question!.id, 'again'))).toEqual([
      'INVALID_STATE',
      { reason: 'interrupts_pending' },
    ])
    expect(code(() => result.current.regenerate())).toEqual(['INVALID_STATE', { reason: 'interrupts_pending' }])
  })
})
