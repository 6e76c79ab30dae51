// @vitest-environment jsdom
/**
 * useChat (in <StrictMode>) and ChatRuntime against a foreign AG-UI 1.0 server (`node:http` +
 * `@ag-ui/encoder`, POST only at `/awp`, no SSE ids, a zone-less `expiresAt`): plain chat,
 * pause/resume, a cut stream (plain and resumed) and `stop()` (docs/client-contract.md#plain-ag-ui-servers).
 */
import type { Message } from '@interlude/protocol'
import { act, cleanup, renderHook, waitFor } from '@testing-library/react'
import { StrictMode, type ReactNode } from 'react'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { ChatRuntime } from './core/chat-runtime.ts'
import { LOOSE_EXPIRES_AT, startForeignServer, type ForeignServer } from './test-utils/foreign-agui-server.ts'
import { useChat, type UseChatOptions, type UseChatResult } from './use-chat.ts'

let server: ForeignServer
let withIds: ForeignServer
let seq = 0

beforeAll(async () => {
  server = await startForeignServer()
  withIds = await startForeignServer({ ids: true })
})
afterAll(async () => {
  await server.close()
  await withIds.close()
})
afterEach(() => {
  cleanup()
  server.cutResume = false
  server.requests.length = 0
  withIds.requests.length = 0
})

const strict = ({ children }: { children: ReactNode }) => <StrictMode>{children}</StrictMode>
const thread = () => `foreign-${++seq}`
const texts = (messages: readonly Message[]) => messages.map((m) => (typeof m.content === 'string' ? m.content : ''))

function mount(options: UseChatOptions = {}) {
  const base: UseChatOptions = { runUrl: `${server.baseUrl}/awp`, mode: 'plain', throttleMs: 0, threadId: thread() }
  return renderHook(() => useChat({ ...base, ...options }), { wrapper: strict })
}

async function pause(result: { current: UseChatResult }) {
  act(() => void result.current.sendMessage('approve the deploy'))
  await waitFor(() => expect(result.current.pendingInterrupts).toBeDefined())
  return result.current.pendingInterrupts!
}

const approve = (result: { current: UseChatResult }, batch: NonNullable<UseChatResult['pendingInterrupts']>) =>
  act(
    () =>
      void result.current.resume({
        batchId: batch.id,
        entries: [{ interruptId: batch.interrupts[0]!.id, status: 'resolved', payload: { approved: true } }],
      }),
  )

describe('useChat against a foreign AG-UI server', () => {
  it('chats through POST /awp, sending state {} before any snapshot', async () => {
    const { result } = mount()
    act(() => void result.current.sendMessage('hello'))
    await waitFor(() => expect(result.current.isLoading).toBe(false))
    expect(result.current.error).toBeUndefined()
    expect(texts(result.current.messages)).toEqual(['hello', 'You said: hello'])
    expect(server.requests).toEqual(['POST /awp'])
    expect(server.inputs.at(-1)).toMatchObject({ state: {}, messages: [{ role: 'user', content: 'hello' }] })
  })

  it('pauses with a zone-less expiresAt and continues the same turn on resume', async () => {
    const { result } = mount()
    const batch = await pause(result)
    expect(batch.interrupts[0]).toMatchObject({ reason: 'tool_call', expiresAt: LOOSE_EXPIRES_AT })
    expect(result.current.error).toBeUndefined()
    approve(result, batch)
    await waitFor(() => expect(result.current.isResuming).toBe(false))
    expect(result.current.error).toBeUndefined()
    expect(texts(result.current.messages).at(-1)).toBe('Deployed.')
    expect(server.inputs.at(-1)?.resume).toEqual([
      { interruptId: batch.interrupts[0]!.id, status: 'resolved', payload: { approved: true } },
    ])
  })

  it('a cut plain stream ends in a typed failure without reconnecting; the next send works', async () => {
    const { result } = mount()
    act(() => void result.current.sendMessage('please cut'))
    await waitFor(() => expect(result.current.isLoading).toBe(false))
    expect(result.current.error).toMatchObject({ details: { reason: 'stream_cut' } })
    expect(result.current.recovery.required).toBe(false)
    expect(texts(result.current.messages)).toEqual(['please cut', 'Half an ans'])
    act(() => void result.current.sendMessage('hello again'))
    await waitFor(() => expect(result.current.isLoading).toBe(false))
    expect(result.current.error).toBeUndefined()
    expect(server.requests).toEqual(['POST /awp', 'POST /awp'])
  })

  it('a cut resumed stream requires recovery; acceptLocalHistory keeps the history and unlocks', async () => {
    const { result } = mount()
    const batch = await pause(result)
    server.cutResume = true
    approve(result, batch)
    await waitFor(() => expect(result.current.isResuming).toBe(false))
    expect(result.current.error).toMatchObject({ details: { reason: 'stream_cut' } })
    expect(result.current.recovery.required).toBe(true)
    expect(() => result.current.sendMessage('next')).toThrow(expect.objectContaining({ code: 'RECOVERY_REQUIRED' }))
    // No snapshot to fetch: recover() says so instead of calling a route the server lacks.
    await expect(result.current.recover()).rejects.toMatchObject({
      code: 'NOT_FOUND',
      details: { reason: 'plain_server' },
    })
    const history = result.current.messages
    act(() => result.current.acceptLocalHistory())
    expect(result.current.recovery.required).toBe(false)
    expect(result.current.messages).toEqual(history)
    expect(texts(history).at(-1)).toBe('Deploying')
    act(() => void result.current.sendMessage('hello again, later'))
    await waitFor(() => expect(result.current.isLoading).toBe(false))
    expect(result.current.error).toBeUndefined()
    expect(server.requests.every((r) => r === 'POST /awp')).toBe(true)
  })

  it('stop() after acknowledgement closes the stream and calls no cancel route', async () => {
    const { result } = mount()
    act(() => void result.current.sendMessage('hang on'))
    await waitFor(() => expect(result.current.status).toBe('streaming'))
    act(() => result.current.stop())
    await server.hangClosed
    expect(result.current).toMatchObject({ isLoading: false, error: undefined })
    expect(server.requests).toEqual(['POST /awp'])
  })
})

describe('ChatRuntime in auto mode against a foreign server', () => {
  it('detects the missing event log from a bare 404 and remembers it: no cancel, no recover call', async () => {
    const rt = new ChatRuntime({
      threadId: thread(),
      api: withIds.baseUrl,
      runUrl: `${withIds.baseUrl}/awp`,
      throttleMs: 0,
      reconnect: { delayMs: () => 0 },
    })
    await rt.sendMessage('please cut')
    // It had ids, so it tried Interlude's event log once; the bare 404 proved it absent.
    expect(withIds.requests).toEqual([
      'POST /awp',
      expect.stringMatching(new RegExp(`^GET /threads/${rt.getSnapshot().threadId}/events\\?after=\\d+$`)),
    ])
    expect(rt.getSnapshot().error).toMatchObject({ code: 'NETWORK_ERROR', details: { reason: 'stream_cut' } })
    await expect(rt.recover()).rejects.toMatchObject({ details: { reason: 'plain_server' } })
    await rt.sendMessage('again')
    expect(withIds.requests).toHaveLength(3)
    rt.dispose()
  })

  it('stop() after acknowledgement tries the cancel route once; its bare 404 switches to plain mode', async () => {
    const rt = new ChatRuntime({ threadId: thread(), api: server.baseUrl, runUrl: `${server.baseUrl}/awp` })
    const threadId = rt.getSnapshot().threadId
    const first = rt.sendMessage('hang on')
    await vi.waitFor(() => expect(rt.getSnapshot().status).toBe('streaming'))
    rt.stop()
    await first
    await vi.waitFor(() => expect(server.requests).toHaveLength(2))
    expect(server.requests[1]).toMatch(new RegExp(`^POST /threads/${threadId}/runs/.+/cancel$`))
    await vi.waitFor(() => expect(rt.recover()).rejects.toMatchObject({ details: { reason: 'plain_server' } }))
    expect(server.requests).toHaveLength(2) // detected: recover() asked nothing
    rt.dispose()
  })

  it('a bare 404 from the snapshot route switches recover() to plain mode', async () => {
    const rt = new ChatRuntime({ threadId: thread(), api: withIds.baseUrl, runUrl: `${withIds.baseUrl}/awp` })
    await expect(rt.recover()).rejects.toMatchObject({ code: 'NOT_FOUND', details: { reason: 'plain_server' } })
    await expect(rt.recover()).rejects.toMatchObject({ details: { reason: 'plain_server' } })
    expect(withIds.requests).toEqual([`GET /threads/${rt.getSnapshot().threadId}`])
    rt.dispose()
  })
})
