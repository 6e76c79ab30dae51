// @vitest-environment jsdom
/**
 * An approval answered inline at its tool call, against the real agent server on 127.0.0.1 (SQLite in a temp dir),
 * inside <StrictMode> (docs/client-contract.md#custom-renderers): the card's one click answers and submits, the
 * batch goes out in exactly one resume request with every answer, and the turn continues. Nothing is mocked; fetch
 * is only wrapped to count the requests.
 */
import { startServer, type RunningServer } from '@interlude/agent-server'
import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { StrictMode } from 'react'
import { afterAll, afterEach, expect, it } from 'vitest'
import { useChat } from '../use-chat.ts'
import { InlineApproval, InterruptFormProvider } from './interrupt-context.tsx'
import { InterruptForm } from './interrupt-form.tsx'
import type { InterruptRendererProps } from './interrupt-renderer.ts'
import { useInterruptForm } from './use-interrupt-form.ts'

const TOKEN = 'eng-token'
const dir = mkdtempSync(join(tmpdir(), 'interlude-inline-approval-'))
let server: RunningServer | undefined
afterEach(cleanup)
afterAll(async () => {
  await server?.close()
  rmSync(dir, { recursive: true, force: true })
})

function DeployCard({ args, approve, submit, disabled }: InterruptRendererProps<{ version: string }>) {
  return (
    <button
      type="button"
      disabled={disabled}
      onClick={() => {
        approve()
        submit()
      }}
    >
      Deploy {args?.version} and continue
    </button>
  )
}

function Chat({ api, fetchImpl }: { api: string; fetchImpl: typeof fetch }) {
  const chat = useChat({
    api,
    headers: { Authorization: `Bearer ${TOKEN}` },
    throttleMs: 0,
    threadId: `inline-${process.pid}`,
    fetch: fetchImpl,
  })
  const form = useInterruptForm(chat.pendingInterrupts, { messages: chat.messages })
  const calls = chat.messages.flatMap((m) => (m.role === 'assistant' ? (m.toolCalls ?? []) : []))
  return (
    <InterruptFormProvider form={form} onSubmit={chat.resume} disabled={chat.isResuming}>
      <ol aria-label="Conversation">
        {calls.map((call) => (
          <li key={call.id} data-state={chat.messages.some((m) => m.role === 'tool' && m.toolCallId === call.id)}>
            {call.function.name}
            {call.function.name === 'deploy' && <InlineApproval toolCallId={call.id} render={DeployCard} />}
          </li>
        ))}
      </ol>
      <InterruptForm batch={chat.pendingInterrupts} onSubmit={chat.resume} />
      <button type="button" onClick={() => void chat.sendMessage('deploy v2.1 to staging')}>
        Send
      </button>
      <p role="status">{chat.isLoading ? 'busy' : 'idle'}</p>
    </InterruptFormProvider>
  )
}

it('sends one resume with the inline answer and the batch form’s, and the turn continues', async () => {
  server = await startServer({ dbPath: join(dir, 'agent.db'), tokens: { eng: TOKEN } })
  const resumes: unknown[] = []
  const fetchImpl: typeof fetch = (input, init) => {
    const body = typeof init?.body === 'string' ? (JSON.parse(init.body) as { resume?: unknown }) : undefined
    if (init?.method === 'POST' && Array.isArray(body?.resume)) resumes.push(body.resume)
    return globalThis.fetch(input, init)
  }
  render(
    <StrictMode>
      <Chat api={server.baseUrl} fetchImpl={fetchImpl} />
    </StrictMode>,
  )
  fireEvent.click(screen.getByRole('button', { name: 'Send' }))
  const conversation = screen.getByRole('list', { name: 'Conversation' })
  const inline = await within(conversation).findByRole('group', { name: 'Deploy v2.1 to staging?' })
  const form = screen.getByRole('form', { name: 'The agent needs your answer' })
  fireEvent.click(within(within(form).getByRole('group', { name: /^Publish/ })).getByRole('radio', { name: 'Approve' }))
  fireEvent.click(within(inline).getByRole('button', { name: 'Deploy v2.1 and continue' }))

  await waitFor(() => expect(screen.queryByRole('form')).toBeNull())
  await waitFor(() => expect(screen.getByRole('status').textContent).toBe('idle'))
  await waitFor(() =>
    expect([...conversation.querySelectorAll('li')].map((li) => li.getAttribute('data-state'))).toEqual([
      'true',
      'true',
    ]),
  )
  expect(resumes).toEqual([
    [
      expect.objectContaining({ status: 'resolved', payload: { approved: true } }),
      expect.objectContaining({ status: 'resolved', payload: { approved: true } }),
    ],
  ])
})
