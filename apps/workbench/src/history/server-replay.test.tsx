// @vitest-environment jsdom
/**
 * `<ServerReplay>` against the real agent server on 127.0.0.1 (SQLite, the scripted release assistant), in
 * <StrictMode>: the principal's stored threads are listed, one is replayed from the server's log with the usual player
 * and inspector, and its frames offer "Fork here" and "What if…". Nothing is mocked.
 */
import {
  authHeader,
  interruptsOf,
  newThreadId,
  postRun,
  resumeInput,
  startTestServer,
} from '@interlude/agent-server/testing'
import type { TestServer } from '@interlude/agent-server/testing'
import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react'
import type { ThreadSnapshot } from '@interlude/protocol'
import { StrictMode } from 'react'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
import { createHistoryClient } from './history-client.ts'
import type { HistoryClient } from './history-client.ts'
import { ServerReplay } from './server-replay.tsx'
import { releaseTurn } from './test-threads.ts'
import type { ReleaseTurn } from './test-threads.ts'

let server: TestServer
let client: HistoryClient
let threadId: string
let title: string
let turn: ReleaseTurn

beforeAll(async () => {
  server = await startTestServer()
  client = createHistoryClient({ baseUrl: server.baseUrl, headers: () => authHeader('alice') })
  threadId = newThreadId()
  // A title of its own: other tests of this file add threads to the same principal's list.
  title = `deploy v2.1 to production (${threadId.slice(-6)})`
  turn = await releaseTurn(server, threadId, title, true)
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
  // Forks made by other tests have the same title: the row is found by its thread.
  const row = await waitFor(() => list.querySelector<HTMLElement>(`li[data-thread-id="${threadId}"]`) ?? fail())
  fireEvent.click(within(row).getByRole('button', { name: title }))
  return screen.findByTestId('replay-view', {}, { timeout: 10_000 })
}

function fail(): never {
  throw new Error('not there yet')
}

async function snapshot(id: string): Promise<ThreadSnapshot & { parent?: unknown }> {
  const res = await fetch(`${server.baseUrl}/threads/${id}`, { headers: authHeader('alice') })
  expect(res.status).toBe(200)
  return (await res.json()) as ThreadSnapshot
}

type Deployments = { deployments: unknown[] }

const controls = () => screen.getByRole('toolbar', { name: 'Replay controls' })
const atFrame = () => screen.getByRole('region', { name: 'Time travel at this frame' })

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

  it('"What if…" on the paused batch: a fork paused at the same question, denied there; the parent is unchanged', async () => {
    const { onOpenLive } = renderReplay()
    await openThread()
    fireEvent.click(within(controls()).getByRole('button', { name: 'batch 1' }))
    fireEvent.click(within(atFrame()).getByRole('button', { name: 'What if…' }))
    await waitFor(() => expect(onOpenLive).toHaveBeenCalledOnce())
    const forkId = onOpenLive.mock.calls[0]![0]
    expect(forkId).not.toBe(threadId)
    const fork = await snapshot(forkId)
    expect(fork).toMatchObject({ status: 'interrupted', parent: { threadId, at: { batchId: turn.pausedRunId } } })
    // The same question with new interrupt ids.
    const ids = (fork.interrupts ?? []).map((i) => i.id)
    expect(ids).toHaveLength(2)
    for (const id of ids) expect(turn.interruptIds).not.toContain(id)
    // Answered differently in the fork: nothing is deployed there, and the parent keeps its one deployment.
    const deny = ids.map((interruptId) => ({ interruptId, status: 'resolved' as const, payload: { approved: false } }))
    const denied = await postRun(server, resumeInput(forkId, deny))
    expect(interruptsOf(denied.events)).toEqual([])
    expect(((await snapshot(forkId)).state as Deployments).deployments).toEqual([])
    const parent = await snapshot(threadId)
    expect(parent).toMatchObject({ status: 'idle' })
    expect((parent.state as Deployments).deployments).toHaveLength(1)
    expect(parent.parent).toBeUndefined()
  })

  it('"Fork here" forks after the frame’s last message and opens the fork', async () => {
    const { onOpenLive } = renderReplay()
    await openThread()
    fireEvent.click(within(controls()).getByRole('button', { name: 'batch 1' }))
    const parent = await snapshot(threadId)
    const [asked, plan] = parent.messages
    expect(within(atFrame()).getByText(/after the assistant message “Plan: publish release v2\.1/)).toBeTruthy()
    fireEvent.click(within(atFrame()).getByRole('button', { name: 'Fork here' }))
    await waitFor(() => expect(onOpenLive).toHaveBeenCalledOnce())
    const fork = await snapshot(onOpenLive.mock.calls[0]![0])
    expect(fork.parent).toEqual({ threadId, at: { messageId: plan!.id } })
    expect(fork.messages.slice(0, 2).map((m) => m.id)).toEqual([asked!.id, plan!.id])
  })

  it('draws the branch tree: a thread’s forks, and a fork’s origin that opens for replay', async () => {
    const made = await client.fork(threadId, { at: { batchId: turn.pausedRunId } })
    render(<ServerReplay client={client} onOpenLive={vi.fn()} onReturnToLive={vi.fn()} initialThreadId={threadId} />)
    const tree = await screen.findByRole('region', { name: 'Branches' }, { timeout: 10_000 })
    const child = await within(tree).findByText((_, node) => node?.getAttribute('data-thread-id') === made.threadId)
    expect(child.textContent).toContain(`at batch ${turn.pausedRunId.slice(0, 12)}`)
    expect(
      within(tree)
        .getByText(/this thread/)
        .closest('li')
        ?.getAttribute('data-thread-id'),
    ).toBe(threadId)
    cleanup()

    render(
      <ServerReplay client={client} onOpenLive={vi.fn()} onReturnToLive={vi.fn()} initialThreadId={made.threadId} />,
    )
    const forkTree = await screen.findByRole('region', { name: 'Branches' }, { timeout: 10_000 })
    const origin = await within(forkTree).findByRole('button', { name: new RegExp(threadId.slice(0, 16)) })
    fireEvent.click(origin)
    await waitFor(() =>
      expect(
        within(screen.getByRole('region', { name: 'Branches' }))
          .getByText(/this thread/)
          .closest('li'),
      ).toHaveProperty('dataset.threadId', threadId),
    )
  })
})
