// @vitest-environment jsdom
/**
 * The reload recipe of the README (packages/react/README.md#reload-recipe) against the real agent
 * server, in <StrictMode>: keep the thread id, `recover()` on mount, `THREAD_NOT_FOUND` is a new
 * conversation; after a "reload" (a new component) the paused batch is back and answerable.
 */
import { startServer, type RunningServer } from '@interlude/agent-server'
import { InterludeError } from '@interlude/protocol'
import { act, cleanup, renderHook, waitFor } from '@testing-library/react'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { StrictMode, useEffect, useState, type ReactNode } from 'react'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { useChat } from './use-chat.ts'

const TOKEN = 'carol-token'
let dir: string
let server: RunningServer

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'interlude-react-reload-'))
  server = await startServer({ dbPath: join(dir, 'agent.db'), tokens: { carol: TOKEN } })
})
afterAll(async () => {
  await server.close()
  rmSync(dir, { recursive: true, force: true })
})
afterEach(cleanup)

const strict = ({ children }: { children: ReactNode }) => <StrictMode>{children}</StrictMode>
const storage = new Map<string, string>()
const problems: unknown[] = []

/** The recipe, with a Map standing in for sessionStorage. */
function useReloadableChat() {
  const [threadId] = useState(() => storage.get('thread') ?? `reload-${process.pid}-${Date.now()}`)
  const chat = useChat({ api: server.baseUrl, headers: { Authorization: `Bearer ${TOKEN}` }, threadId, throttleMs: 0 })
  const { recover } = chat
  useEffect(() => {
    storage.set('thread', threadId)
    recover().catch((error: unknown) => {
      if (InterludeError.isInstance(error) && error.code === 'THREAD_NOT_FOUND') return
      problems.push(error)
    })
  }, [recover, threadId])
  return chat
}

describe('the reload recipe', () => {
  it('starts a new thread quietly, and after a reload brings back the paused batch', async () => {
    const first = renderHook(useReloadableChat, { wrapper: strict })
    act(() => void first.result.current.sendMessage('deploy v5.0 to staging'))
    await waitFor(() => expect(first.result.current.pendingInterrupts).toBeDefined())
    const threadId = first.result.current.threadId
    first.unmount()

    const second = renderHook(useReloadableChat, { wrapper: strict })
    expect(second.result.current.threadId).toBe(threadId)
    await waitFor(() => expect(second.result.current.pendingInterrupts).toBeDefined())
    expect(second.result.current.messages[0]).toMatchObject({ role: 'user', content: 'deploy v5.0 to staging' })
    const batch = second.result.current.pendingInterrupts!
    act(
      () =>
        void second.result.current.resume({
          batchId: batch.id,
          entries: batch.interrupts.map((i) => ({ interruptId: i.id, status: 'cancelled' as const })),
        }),
    )
    await waitFor(() => expect(second.result.current.isResuming).toBe(false))
    expect(second.result.current.error).toBeUndefined()
    expect(problems).toEqual([])
  })
})
