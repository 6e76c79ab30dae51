// @vitest-environment jsdom
/**
 * The Permissions view against the real agent server on 127.0.0.1 (SQLite in a temporary directory, the scripted
 * release assistant whose `publish_release` allows `remember: "thread"`), in <StrictMode>: the principal's rules are
 * listed with tool, arguments, scope, thread, who and when; revoking asks for a confirmation (Escape keeps the rule),
 * then the next release asks again; a refused revoke is shown with its code. Nothing is mocked.
 */
import { createDecisionsClient } from '@interlude/client'
import type { DecisionsClient } from '@interlude/client'
import {
  interruptsOf,
  newThreadId,
  postRun,
  resumeInput,
  runInput,
  startTestServer,
  TOKENS,
  userMessage,
} from '@interlude/agent-server/testing'
import type { TestServer } from '@interlude/agent-server/testing'
import type { Interrupt } from '@interlude/protocol'
import { act, cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react'
import { StrictMode } from 'react'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { PermissionsView } from './permissions-view.tsx'

let server: TestServer
beforeAll(async () => {
  server = await startTestServer()
})
afterAll(async () => {
  await server.dispose()
})
afterEach(cleanup)

const as = (principal: keyof typeof TOKENS, fetchImpl?: typeof fetch): DecisionsClient =>
  createDecisionsClient({
    baseUrl: server.baseUrl,
    token: TOKENS[principal],
    ...(fetchImpl === undefined ? {} : { fetch: fetchImpl }),
  })
const toolOf = (i: Interrupt) => (i.metadata as { toolName: string }).toolName

/** `principal` asks for a release and approves publish_release with "remember in this thread". */
async function rememberRelease(principal: 'alice' | 'bob'): Promise<string> {
  const threadId = newThreadId()
  const first = await postRun(server, runInput(threadId, [userMessage('release v2.1 to staging')]), { principal })
  const resume = interruptsOf(first.events).map((i) => ({
    interruptId: i.id,
    status: 'resolved' as const,
    payload: toolOf(i) === 'publish_release' ? { approved: true, remember: 'thread' } : { approved: false },
  }))
  await postRun(server, resumeInput(threadId, resume), { principal })
  return threadId
}

const rowOf = (threadId: string) =>
  screen.getAllByRole('row').find((row) => row.textContent?.includes(threadId)) as HTMLElement

describe('<PermissionsView> (real server)', () => {
  it('lists my rules, confirms before revoking (Escape keeps it), revokes, and the next release asks again', async () => {
    const threadId = await rememberRelease('bob')
    const strangers = await rememberRelease('alice')
    render(
      <StrictMode>
        <PermissionsView client={as('bob')} active />
      </StrictMode>,
    )
    const table = await screen.findByRole('table', { name: 'Your remembered permissions' })
    const row = rowOf(threadId)
    expect(within(row).getByText('publish_release')).toBeTruthy()
    expect(within(row).getByText('any arguments')).toBeTruthy()
    expect(within(row).getByTestId('rule-scope').textContent).toBe('this conversation')
    expect(within(row).getByText('bob')).toBeTruthy()
    expect(within(row).getByRole('time').getAttribute('dateTime')).toMatch(/^\d{4}-\d\d-\d\dT/)
    expect(table.textContent).not.toContain(strangers) // alice's rule is not bob's to see

    // The confirmation takes the focus; Escape keeps the rule.
    fireEvent.click(within(row).getByRole('button', { name: 'Revoke the rule for publish_release' }))
    const confirm = within(row).getByRole('group', { name: 'Confirm revoking the rule for publish_release' })
    expect(document.activeElement).toBe(within(confirm).getByRole('button', { name: 'Revoke' }))
    fireEvent.keyDown(document.activeElement!, { key: 'Escape' })
    expect(within(row).queryByRole('group')).toBeNull()
    expect(await as('bob').listPermissionRules({ threadId })).toHaveLength(1)

    fireEvent.click(within(row).getByRole('button', { name: 'Revoke the rule for publish_release' }))
    fireEvent.click(within(row).getByRole('button', { name: 'Revoke' }))
    await waitFor(() => expect(screen.getByTestId('permissions-outcome').textContent).toContain('will ask again'))
    await waitFor(() => expect(screen.queryByText(threadId)).toBeNull())
    expect(await as('bob').listPermissionRules({ threadId })).toEqual([])

    // The next release in that thread asks for publish_release again.
    const again = await postRun(server, runInput(threadId, [userMessage('release v2.2 to staging')]), {
      principal: 'bob',
    })
    expect(interruptsOf(again.events).map(toolOf)).toContain('publish_release')
  })

  it('lists my bounded grants with calls left and deadline, and revokes one after a confirmation', async () => {
    const threadId = newThreadId()
    const first = await postRun(server, runInput(threadId, [userMessage('deploy v2 to staging')]), { principal: 'bob' })
    const until = new Date(Date.now() + 3_600_000).toISOString()
    const resume = interruptsOf(first.events).map((i) => ({
      interruptId: i.id,
      status: 'resolved' as const,
      payload:
        toolOf(i) === 'deploy' ? { approved: true, grant: { calls: 3, scope: 'thread', until } } : { approved: true },
    }))
    await postRun(server, resumeInput(threadId, resume), { principal: 'bob' })
    const deploy = () =>
      postRun(server, runInput(threadId, [userMessage('deploy v2 to staging')]), { principal: 'bob' })
    expect(interruptsOf((await deploy()).events)).toEqual([]) // the grant approved it: 2 left

    render(<PermissionsView client={as('bob')} active />)
    const table = await screen.findByRole('table', { name: 'Your bounded grants' })
    const row = within(table)
      .getAllByRole('row')
      .find((r) => r.textContent?.includes(threadId)) as HTMLElement
    expect(within(row).getByText('deploy')).toBeTruthy()
    expect(within(row).getByTestId('grant-calls-left').textContent).toBe('2 of 3')
    expect(within(row).getByRole('time').getAttribute('dateTime')).toBe(until)

    fireEvent.click(within(row).getByRole('button', { name: 'Revoke the grant for deploy' }))
    fireEvent.click(within(row).getByRole('button', { name: 'Revoke' }))
    await waitFor(() => expect(screen.getByTestId('permissions-outcome').textContent).toContain('will ask again'))
    await waitFor(() => expect(screen.queryByText(threadId)).toBeNull())
    expect(await as('bob').listGrants({ threadId })).toEqual([])
    expect(interruptsOf((await deploy()).events).map(toolOf)).toEqual(['deploy'])
  })

  it('shows a refused revoke with its code and keeps the rule listed', async () => {
    const threadId = await rememberRelease('bob')
    // The rule is revoked elsewhere (another tab) between listing and confirming: the server answers 404.
    render(<PermissionsView client={as('bob')} active />)
    await screen.findByRole('table')
    const row = rowOf(threadId)
    const ruleId = row.getAttribute('data-rule-id')!
    await as('bob').revokePermissionRule(ruleId)
    fireEvent.click(within(row).getByRole('button', { name: 'Revoke the rule for publish_release' }))
    await act(async () => {
      fireEvent.click(within(row).getByRole('button', { name: 'Revoke' }))
    })
    const alert = await screen.findByTestId('permissions-outcome')
    await waitFor(() => expect(alert.textContent).toMatch(/^NOT_FOUND: /))
    expect(alert.getAttribute('role')).toBe('alert')
  })

  it('a principal the server does not know sees UNAUTHENTICATED, not a crash; nothing is read while inactive', async () => {
    const requests: string[] = []
    const counting: typeof fetch = (input, init) => {
      requests.push(String(input))
      return fetch(input, init)
    }
    const stranger = createDecisionsClient({ baseUrl: server.baseUrl, token: 'nobody', fetch: counting })
    const view = render(<PermissionsView client={stranger} active={false} />)
    expect(screen.getByTestId('permissions-empty').textContent).toBe('Loading…')
    expect(requests).toEqual([])
    view.rerender(<PermissionsView client={stranger} active />)
    await waitFor(() => expect(screen.getByTestId('permissions-error').textContent).toMatch(/^UNAUTHENTICATED: /))
    expect(screen.queryByRole('table')).toBeNull()
  })
})
