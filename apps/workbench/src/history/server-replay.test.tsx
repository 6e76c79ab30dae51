// @vitest-environment jsdom
/**
 * `<ServerReplay>` against the real agent server on 127.0.0.1 (SQLite, the scripted release assistant), in
 * <StrictMode>: the principal's stored threads are listed, one is replayed from the server's log with the usual player
 * and inspector, and its frames offer "Fork here" and "What if…". Nothing is mocked.
 */
import { authHeader, newThreadId, startTestServer } from '@interlude/agent-server/testing'
import type { TestServer } from '@interlude/agent-server/testing'
import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react'
import { StrictMode } from 'react'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
import { createHistoryClient } from './history-client.ts'
import type { HistoryClient } from './history-client.ts'
import { ServerReplay } from './server-replay.tsx'
import { releaseTurn } from './test-threads.ts'

let server: TestServer
let client: HistoryClient
let threadId: string
let title: string

beforeAll(async () => {
  server = await startTestServer()
  client = createHistoryClient({ baseUrl: server.baseUrl, headers: () => authHeader('alice') })
  threadId = newThreadId()
  // A title of its own: other tests of this file add threads to the same principal's list.
  title = `deploy v2.1 to production (${threadId.slice(-6)})`
  await releaseTurn(server, threadId, title, true)
})
afterAll(async () => {
  await server.dispose()
})
beforeEach(() => {
  Element.prototype.scrollIntoView = () => undefined
})
afterEach(cleanup)

function renderReplay() {
  const onOpenLive = vi.fn<(threadId: string) => void>()
  const onReturnToLive = vi.fn()
  render(
    <StrictMode>
      <ServerReplay client={client} onOpenLive={onOpenLive} onReturnToLive={onReturnToLive} />
    </StrictMode>,
  )
  return { onOpenLive, onReturnToLive }
}

/** Opens the thread from the list and waits for its replay. */
async function openThread(): Promise<HTMLElement> {
  const list = screen.getByRole('region', { name: 'Stored threads' })
  fireEvent.click(await within(list).findByRole('button', { name: title }))
  return screen.findByTestId('replay-view', {}, { timeout: 10_000 })
}

const controls = () => screen.getByRole('toolbar', { name: 'Replay controls' })
const atFrame = () => screen.getByRole('region', { name: 'At this frame' })

// Rendering a replay of a real thread in jsdom takes seconds on a shared 2-core machine: more than the default 5 s.
describe('<ServerReplay> (real server)', { timeout: 30_000 }, () => {
  it('lists the stored threads and replays one from the server’s log, frame by frame', async () => {
    const { onReturnToLive } = renderReplay()
    const view = await openThread()
    expect(within(view).getByRole('status').textContent).toContain('read from the server')
    // Frame 1 is the read of the log, the last one the thread as the server has it.
    expect(within(controls()).getByText(/^Frame 1 \//)).toBeTruthy()
    fireEvent.click(within(controls()).getByRole('button', { name: 'batch 1' }))
    expect(screen.getByTestId('inspector-batch').textContent).toContain('tool_call')
    const conversation = screen.getByRole('region', { name: 'Conversation at this frame' })
    expect(conversation.textContent).toContain(title)
    expect(conversation.textContent).toContain('Both steps need your approval.')
    // The paused batch offers "What if…", the last message "Fork here".
    expect(within(atFrame()).getByRole('button', { name: 'What if…' })).toBeTruthy()
    expect(within(atFrame()).getByRole('button', { name: 'Fork here' })).toHaveProperty('disabled', false)
    fireEvent.click(within(controls()).getByRole('button', { name: 'Last frame' }))
    expect(conversation.textContent).toContain('All steps ran.')
    // Every control of the conversation stays disabled: the replay itself sends nothing.
    for (const button of within(conversation).getAllByRole('button')) expect(button).toHaveProperty('disabled', true)
    fireEvent.click(within(view).getByRole('button', { name: 'Return to Live' }))
    expect(onReturnToLive).toHaveBeenCalledOnce()
  })

  it('a frame before any message cannot be forked', async () => {
    renderReplay()
    await openThread()
    fireEvent.click(within(controls()).getByRole('button', { name: 'First frame' }))
    expect(within(atFrame()).getByRole('button', { name: 'Fork here' })).toHaveProperty('disabled', true)
    expect(within(atFrame()).queryByRole('button', { name: 'What if…' })).toBeNull()
  })

  it('a thread the principal cannot read shows the refusal as text', async () => {
    const onOpenLive = vi.fn()
    const stranger = createHistoryClient({ baseUrl: server.baseUrl, headers: () => authHeader('bob') })
    render(
      <ServerReplay
        client={stranger}
        onOpenLive={onOpenLive}
        onReturnToLive={() => undefined}
        initialThreadId={threadId}
      />,
    )
    await waitFor(() => expect(screen.getByRole('alert').textContent).toMatch(/^THREAD_NOT_FOUND: /))
    expect(screen.queryByTestId('replay-view')).toBeNull()
  })
})
