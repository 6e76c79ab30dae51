// @vitest-environment jsdom
/**
 * useChat with `whileBusy` against the real agent server (paced scripted model, SQLite in a temp dir) on 127.0.0.1,
 * inside <StrictMode>: messages typed while a run streams are queued and answered in order, a queued one is cancelled,
 * and a remount (a reload) of the same thread shows the queue again from sessionStorage.
 */
import { startServer, type RunningServer } from '@interlude/agent-server'
import type { Message } from '@interlude/protocol'
import { act, cleanup, renderHook, waitFor } from '@testing-library/react'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { StrictMode, type ReactNode } from 'react'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { useChat, type UseChatOptions } from './use-chat.ts'

const TOKEN = 'alice-token'
let dir: string
let server: RunningServer
let seq = 0

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'interlude-react-queue-'))
  server = await startServer({ dbPath: join(dir, 'agent.db'), tokens: { alice: TOKEN }, pacingMs: 25 })
})
afterAll(async () => {
  await server.close()
  rmSync(dir, { recursive: true, force: true })
})
afterEach(cleanup)

const strict = ({ children }: { children: ReactNode }) => <StrictMode>{children}</StrictMode>

function mount(threadId: string, options: UseChatOptions = {}) {
  const base: UseChatOptions = {
    api: server.baseUrl,
    headers: { Authorization: `Bearer ${TOKEN}` },
    throttleMs: 0,
    threadId,
    whileBusy: 'enqueue',
  }
  return renderHook(() => useChat({ ...base, ...options }), { wrapper: strict })
}

const turns = (messages: readonly Message[]) =>
  messages.map((m) => (m.role === 'user' ? `user:${String(m.content)}` : m.role))

describe('useChat: many messages, one thread', () => {
  it('three messages typed while the first streams are answered in order; one is cancelled from the queue', async () => {
    const { result } = mount(`hook-queue-${process.pid}-${++seq}`)
    act(() => void result.current.sendMessage('one'))
    await waitFor(() => expect(result.current.status).toBe('streaming'))
    await act(() => Promise.all(['two', 'three', 'four'].map((text) => result.current.sendMessage(text))))
    expect(result.current.queued.map((q) => [q.position, q.text])).toEqual([
      [1, 'two'],
      [2, 'three'],
      [3, 'four'],
    ])
    const three = result.current.queued[1]!
    await act(() => result.current.cancelQueued(three.runId))
    expect(result.current.queued.map((q) => q.text)).toEqual(['two', 'four'])
    await waitFor(() => expect(result.current.isLoading || result.current.queued.length > 0).toBe(false), {
      timeout: 10_000,
    })
    expect(turns(result.current.messages)).toEqual([
      'user:one',
      'assistant',
      'user:two',
      'assistant',
      'user:four',
      'assistant',
    ])
    expect(result.current.error).toBeUndefined()
  })

  it('a remount of the thread (a reload) shows the queue again after recover()', async () => {
    const threadId = `hook-queue-${process.pid}-${++seq}`
    const first = mount(threadId)
    act(() => void first.result.current.sendMessage('one'))
    await waitFor(() => expect(first.result.current.status).toBe('streaming'))
    await act(() => Promise.all(['two', 'three'].map((text) => first.result.current.sendMessage(text))))
    first.unmount()
    const { result } = mount(threadId)
    await act(() => result.current.recover())
    expect(result.current.queued.length).toBeGreaterThan(0)
    expect(result.current.queued.map((q) => q.text)).toEqual(
      ['two', 'three'].filter((text) => !result.current.messages.some((m) => m.content === text)),
    )
    await waitFor(() => expect(result.current.isLoading || result.current.queued.length > 0).toBe(false), {
      timeout: 10_000,
    })
    expect(turns(result.current.messages)).toEqual([
      'user:one',
      'assistant',
      'user:two',
      'assistant',
      'user:three',
      'assistant',
    ])
  })
})
