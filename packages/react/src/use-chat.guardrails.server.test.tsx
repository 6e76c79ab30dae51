// @vitest-environment jsdom
/**
 * A withheld answer (docs/guardrails.md#withheld-answers) in `useChat`, against the real agent server on 127.0.0.1
 * (the demo agent, SQLite in a temp dir), hooks inside <StrictMode>: "what is the admin password" trips the demo's
 * `no-secrets` guardrail; the streamed answer stays in `messages` marked by `withheld` until the person decides —
 * blocked, it leaves `messages`; allowed, it is a plain message of the history. A reload shows it withheld too.
 */
import { startServer, type RunningServer } from '@interlude/agent-server'
import type { Message } from '@interlude/protocol'
import { act, cleanup, renderHook, waitFor } from '@testing-library/react'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { StrictMode, type ReactNode } from 'react'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { useChat, type UseChatOptions, type UseChatResult } from './use-chat.ts'

const TOKENS = { eng: 'eng-token' }
let server: RunningServer
let dir: string
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'interlude-react-guardrails-'))
  server = await startServer({ dbPath: join(dir, 'agent.db'), tokens: TOKENS, pacingMs: 0 })
})
afterAll(async () => {
  await server.close()
  rmSync(dir, { recursive: true, force: true })
})
afterEach(cleanup)

const strict = ({ children }: { children: ReactNode }) => <StrictMode>{children}</StrictMode>
let seq = 0
const newThread = () => `guardrails-${process.pid}-${++seq}`

function mount(threadId: string) {
  const options: UseChatOptions = {
    api: server.baseUrl,
    headers: { Authorization: `Bearer ${TOKENS.eng}` },
    throttleMs: 0,
    threadId,
  }
  return renderHook(() => useChat(options), { wrapper: strict })
}

const secretIn = (messages: readonly Message[]) =>
  messages.find((m) => typeof m.content === 'string' && m.content.includes('password:'))

async function withheld(result: { current: UseChatResult }) {
  act(() => void result.current.sendMessage('what is the admin password'))
  await waitFor(() => expect(result.current.pendingInterrupts).toBeDefined())
  await waitFor(() => expect(result.current.status).toBe('idle'))
  const [item] = result.current.withheld
  expect(item).toMatchObject({ guardrail: 'no-secrets', content: expect.stringContaining('password:') })
  // Rendered where it was streamed, marked by `withheld`.
  expect(secretIn(result.current.messages)?.id).toBe(item!.messageId)
  return item!
}

/** Answers the guardrail interrupt through `resume` and waits for the resumed interaction to settle. */
async function decide(result: { current: UseChatResult }, interruptId: string, action: 'allow' | 'block') {
  const batch = result.current.pendingInterrupts!
  act(() => {
    void result.current.resume({
      batchId: batch.id,
      entries: [{ interruptId, status: 'resolved', payload: { action } }],
    })
  })
  await waitFor(() => expect(result.current.pendingInterrupts).toBeUndefined())
  await waitFor(() => expect(result.current.status).toBe('idle'))
}

describe('useChat: a withheld answer', () => {
  it('is marked withheld while paused; blocked, it leaves messages and the note arrives', async () => {
    const { result } = mount(newThread())
    const item = await withheld(result)
    await decide(result, item.interruptId, 'block')
    expect(result.current.withheld).toEqual([])
    expect(secretIn(result.current.messages)).toBeUndefined()
    expect(result.current.messages.at(-1)?.content).toMatch(/^The answer was withheld: the guardrail "no-secrets"/)
  })

  it('allowed, it is a plain message of the history (same id, no longer withheld)', async () => {
    const { result } = mount(newThread())
    const item = await withheld(result)
    await decide(result, item.interruptId, 'allow')
    expect(result.current.withheld).toEqual([])
    expect(secretIn(result.current.messages)?.id).toBe(item.messageId)
    expect(result.current.messages.filter((m) => m.id === item.messageId)).toHaveLength(1)
  })

  it('a reload of the paused thread shows the answer withheld (from the open batch)', async () => {
    const threadId = newThread()
    const first = mount(threadId)
    const item = await withheld(first.result)
    first.unmount()
    const second = mount(threadId)
    await act(() => second.result.current.recover())
    await waitFor(() => expect(second.result.current.withheld.map((w) => w.messageId)).toEqual([item.messageId]))
    expect(secretIn(second.result.current.messages)?.id).toBe(item.messageId)
  })
})
