// @vitest-environment jsdom
/**
 * External calls in `useChat` against the real agent server, in <StrictMode> (docs/client-contract.md#external-calls):
 * the demo's `notify_oncall` leaves the turn waiting for the paging system; the hook shows it in `awaitingExternal`
 * and follows the thread, so the result the on-call principal posts (`?owner=`) shows up live, without a reload.
 */
import { startServer, type RunningServer } from '@interlude/agent-server'
import { act, cleanup, renderHook, waitFor } from '@testing-library/react'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { StrictMode, type ReactNode } from 'react'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { useChat } from './use-chat.ts'

const TOKENS = { carol: 'carol-token', pager: 'pager-token' }
let dir: string
let server: RunningServer

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'interlude-react-external-'))
  server = await startServer({ dbPath: join(dir, 'agent.db'), tokens: TOKENS, oncall: ['pager'] })
})
afterAll(async () => {
  await server.close()
  rmSync(dir, { recursive: true, force: true })
})
afterEach(cleanup)

const strict = ({ children }: { children: ReactNode }) => <StrictMode>{children}</StrictMode>
const headers = { Authorization: `Bearer ${TOKENS.carol}` }

/** The paging system posts the on-call engineer's answer to carol's thread. */
async function postResult(threadId: string, toolCallId: string, content: string): Promise<Response> {
  return fetch(`${server.baseUrl}/runs?owner=carol`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${TOKENS.pager}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({
      threadId,
      runId: `pager-${toolCallId}`,
      messages: [{ id: `page-${toolCallId}`, role: 'tool', toolCallId, content }],
      tools: [],
      context: [],
      state: {},
      forwardedProps: {},
    }),
  })
}

describe('useChat and calls awaiting an external system', () => {
  it('shows the call awaiting and updates live when the on-call system posts the result', async () => {
    const threadId = `external-${process.pid}-${Date.now()}`
    const { result } = renderHook(() => useChat({ api: server.baseUrl, headers, threadId, throttleMs: 0 }), {
      wrapper: strict,
    })
    act(() => void result.current.sendMessage('page oncall about v2.1'))
    await waitFor(() => expect(result.current.awaitingExternal).toHaveLength(1))
    expect(result.current.status).toBe('idle')
    const [call] = result.current.awaitingExternal
    expect(call).toMatchObject({ toolName: 'notify_oncall' })

    const posted = await postResult(threadId, call!.toolCallId, '"ana acknowledged"')
    expect(posted.status).toBe(200)
    await posted.body?.cancel()
    await waitFor(() => expect(result.current.awaitingExternal).toEqual([]))
    await waitFor(() => expect(result.current.status).toBe('idle'))
    const last = result.current.messages.at(-1)
    expect(last).toMatchObject({ role: 'assistant' })
    expect(String(last?.content)).toContain('on-call answered: ana acknowledged')
    expect(result.current.error).toBeUndefined()
  })

  it('a restored thread lists who the call waits for, and a duplicate result settles nothing twice', async () => {
    const threadId = `external-restore-${process.pid}-${Date.now()}`
    const first = renderHook(() => useChat({ api: server.baseUrl, headers, threadId, throttleMs: 0 }), {
      wrapper: strict,
    })
    act(() => void first.result.current.sendMessage('page oncall about v3.0'))
    await waitFor(() => expect(first.result.current.awaitingExternal).toHaveLength(1))
    first.unmount()

    const second = renderHook(() => useChat({ api: server.baseUrl, headers, threadId, throttleMs: 0 }), {
      wrapper: strict,
    })
    await act(async () => void (await second.result.current.recover()))
    expect(second.result.current.awaitingExternal).toEqual([
      { toolCallId: expect.any(String), toolName: 'notify_oncall', resultFrom: ['pager'] },
    ])
    const { toolCallId } = second.result.current.awaitingExternal[0]!
    const posted = await postResult(threadId, toolCallId, '"bo acknowledged"')
    await posted.body?.cancel()
    await waitFor(() => expect(second.result.current.awaitingExternal).toEqual([]))
    const again = await postResult(threadId, toolCallId, '"late"')
    expect(again.status).toBe(200)
    expect(await again.json()).toMatchObject({ settled: [{ toolCallId, content: '"bo acknowledged"' }] })
  })
})
