// @vitest-environment jsdom
/**
 * useChat against the real agent server (scripted release assistant, SQLite in a temp dir) on
 * 127.0.0.1, inside <StrictMode>. Nothing is mocked except what a test injects into fetch to
 * observe requests or to cut a connection.
 */
import { startServer, type RunningServer } from '@interlude/agent-server'
import type { Message } from '@interlude/protocol'
import { act, cleanup, fireEvent, render, renderHook, screen, waitFor } from '@testing-library/react'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { StrictMode, type ReactNode } from 'react'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { PendingInterruptBatch } from './core/types.ts'
import { InterruptForm } from './forms/interrupt-form.tsx'
import { useChat, type UseChatOptions, type UseChatResult } from './use-chat.ts'

const TOKEN = 'alice-token'
let dir: string
let server: RunningServer
let threadSeq = 0

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'interlude-react-'))
  server = await startServer({ dbPath: join(dir, 'agent.db'), tokens: { alice: TOKEN } })
})
afterAll(async () => {
  await server.close()
  rmSync(dir, { recursive: true, force: true })
})
afterEach(cleanup)

const strict = ({ children }: { children: ReactNode }) => <StrictMode>{children}</StrictMode>

interface Recorded {
  readonly method: string
  readonly url: string
  readonly body: string | undefined
}

/** A fetch that records requests and can hand each response body to a test-defined filter. */
function recordingFetch(filter?: (req: Recorded, res: Response) => Response) {
  const requests: Recorded[] = []
  const fetchImpl: typeof fetch = async (input, init) => {
    const req: Recorded = {
      method: init?.method ?? 'GET',
      url: String(input),
      body: typeof init?.body === 'string' ? init.body : undefined,
    }
    requests.push(req)
    const res = await globalThis.fetch(input, init)
    return filter ? filter(req, res) : res
  }
  return { requests, fetch: fetchImpl }
}

function mount(options: UseChatOptions & { threadId: string }) {
  const base: UseChatOptions = { api: server.baseUrl, headers: { Authorization: `Bearer ${TOKEN}` }, throttleMs: 0 }
  return renderHook((props: UseChatOptions) => useChat({ ...base, ...props }), {
    wrapper: strict,
    initialProps: options,
  })
}

const newThread = () => `thread-${process.pid}-${++threadSeq}`
const textOf = (messages: readonly Message[]) =>
  messages.map((m) => (typeof m.content === 'string' ? m.content : '')).join('\n')

async function pauseOnRelease(
  result: { current: UseChatResult },
  text = 'deploy v2.1 to staging',
): Promise<PendingInterruptBatch> {
  act(() => void result.current.sendMessage(text))
  await waitFor(() => expect(result.current.pendingInterrupts).toBeDefined())
  expect(result.current.isLoading).toBe(false)
  return result.current.pendingInterrupts!
}

describe('useChat against the agent server', () => {
  it('release batch: approve publish, deny deploy — the turn continues and only the approved step ran', async () => {
    const { result } = mount({ threadId: newThread() })
    const batch = await pauseOnRelease(result)
    expect(batch.interrupts.map((i) => [i.reason, i.toolCallId !== undefined])).toEqual([
      ['tool_call', true],
      ['tool_call', true],
    ])
    const [publish, deploy] = batch.interrupts
    act(
      () =>
        void result.current.resume({
          batchId: batch.id,
          entries: [
            { interruptId: publish!.id, status: 'resolved', payload: { approved: true } },
            { interruptId: deploy!.id, status: 'resolved', payload: { approved: false, reason: 'not now' } },
          ],
        }),
    )
    expect(result.current.isResuming).toBe(true)
    await waitFor(() => expect(result.current.isResuming).toBe(false))
    expect(result.current.error).toBeUndefined()
    expect(result.current.pendingInterrupts).toBeUndefined()
    const state = result.current.state as { releases: unknown[]; deployments: unknown[] }
    expect(state.releases).toHaveLength(1)
    expect(state.deployments).toHaveLength(0)
    expect(textOf(result.current.messages)).toMatch(
      /Some steps ran\..*published v2\.1.*deploy v2\.1 to staging was denied \(not now\)/,
    )
  })

  it('release batch: approve both with edited deploy arguments', async () => {
    const { result } = mount({ threadId: newThread() })
    const batch = await pauseOnRelease(result, 'release v3.0')
    const [publish, deploy] = batch.interrupts
    act(
      () =>
        void result.current.resume({
          batchId: batch.id,
          entries: [
            { interruptId: publish!.id, status: 'resolved', payload: { approved: true } },
            {
              interruptId: deploy!.id,
              status: 'resolved',
              payload: { approved: true, editedArgs: { version: 'v3.0', environment: 'production' } },
            },
          ],
        }),
    )
    await waitFor(() => expect(result.current.isResuming).toBe(false))
    const state = result.current.state as { deployments: { environment: string; operationId: string }[] }
    expect(state.deployments).toEqual([
      expect.objectContaining({ environment: 'production', operationId: deploy!.toolCallId }),
    ])
    expect(textOf(result.current.messages)).toContain('All steps ran.')
  })

  it('release batch: cancel all finishes the turn without running anything', async () => {
    const { result } = mount({ threadId: newThread() })
    const batch = await pauseOnRelease(result)
    act(
      () =>
        void result.current.resume({
          batchId: batch.id,
          entries: batch.interrupts.map((i) => ({ interruptId: i.id, status: 'cancelled' as const })),
        }),
    )
    await waitFor(() => expect(result.current.isResuming).toBe(false))
    expect(result.current).toMatchObject({ error: undefined, pendingInterrupts: undefined })
    expect(result.current.state).toMatchObject({ releases: [], deployments: [] })
    // The thread accepts new input again.
    act(() => void result.current.sendMessage('hello'))
    await waitFor(() => expect(result.current.isLoading).toBe(false))
    expect(result.current.error).toBeUndefined()
  })

  it('input_required: choose an environment from the enum', async () => {
    const { result } = mount({ threadId: newThread() })
    act(() => void result.current.sendMessage('please ask me which environment'))
    await waitFor(() => expect(result.current.pendingInterrupts).toBeDefined())
    const batch = result.current.pendingInterrupts!
    expect(batch.interrupts[0]).toMatchObject({ reason: 'input_required' })
    act(
      () =>
        void result.current.resume({
          batchId: batch.id,
          entries: [
            {
              interruptId: batch.interrupts[0]!.id,
              status: 'resolved',
              payload: { environment: 'production', notes: 'after 6pm' },
            },
          ],
        }),
    )
    await waitFor(() => expect(result.current.isResuming).toBe(false))
    expect(textOf(result.current.messages)).toContain('You chose production')
  })

  it('a double click on resume produces one request', async () => {
    const rec = recordingFetch()
    const { result } = mount({ threadId: newThread(), fetch: rec.fetch })
    const batch = await pauseOnRelease(result)
    const answer = {
      batchId: batch.id,
      entries: batch.interrupts.map((i) => ({
        interruptId: i.id,
        status: 'resolved' as const,
        payload: { approved: true },
      })),
    }
    const errors: unknown[] = []
    act(() => {
      for (let click = 0; click < 2; click++) {
        try {
          void result.current.resume(answer)
        } catch (error) {
          errors.push(error)
        }
      }
    })
    expect(errors).toEqual([expect.objectContaining({ code: 'BATCH_CLAIMED' })])
    await waitFor(() => expect(result.current.isResuming).toBe(false))
    const resumes = rec.requests.filter((r) => r.method === 'POST' && r.body?.includes('"resume"'))
    expect(resumes).toHaveLength(1)
    expect(result.current.error).toBeUndefined()
  })

  it('<InterruptForm> answers the real (frozen) batch: edit the deploy environment, approve all, submit', async () => {
    let chat: UseChatResult | undefined
    const threadId = newThread()
    function App() {
      chat = useChat({ api: server.baseUrl, headers: { Authorization: `Bearer ${TOKEN}` }, threadId, throttleMs: 0 })
      return (
        <InterruptForm
          batch={chat.pendingInterrupts}
          messages={chat.messages}
          onSubmit={chat.resume}
          disabled={chat.isResuming}
        />
      )
    }
    render(
      <StrictMode>
        <App />
      </StrictMode>,
    )
    act(() => void chat!.sendMessage('deploy v5.0 to staging'))
    await waitFor(() => expect(screen.getByRole('button', { name: 'Approve all' })).toBeTruthy())
    expect(Object.isFrozen(chat!.pendingInterrupts!.interrupts[1]!.responseSchema)).toBe(true)
    fireEvent.click(screen.getByRole('button', { name: 'Approve all' }))
    const deploy = screen.getByRole('group', { name: 'Deploy v5.0 to staging?' })
    fireEvent.click(deploy.querySelector('input[type=checkbox]')!) // Edit arguments
    fireEvent.change(screen.getByLabelText('Environment'), { target: { value: '1' } })
    fireEvent.click(screen.getByRole('button', { name: 'Submit answers' }))
    await waitFor(() => expect(chat!.isResuming).toBe(false))
    expect(chat!.error).toBeUndefined()
    expect(chat!.state).toMatchObject({
      deployments: [expect.objectContaining({ version: 'v5.0', environment: 'production' })],
    })
  })
})
