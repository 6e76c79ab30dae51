import type { Page } from '@playwright/test'
import { expect, test } from '@playwright/test'
import { join } from 'node:path'
import type { RecordedRequest } from '../support/fixtures.ts'
import { trackRequests } from '../support/fixtures.ts'
import { E2E_DIR } from '../support/paths.ts'
import type { RunningServer } from '../support/server.ts'
import { startServer } from '../support/server.ts'
import {
  batchForm,
  openWorkbench,
  serverThread,
  submitButton,
  threadId,
  toolCall,
  waitForTurnEnd,
} from '../support/workbench.ts'

// The workbench's browser tool `read_page_context` against an agent whose scripted model calls it
// (support/agents/release-with-browser.mjs), on the real server (docs/client-contract.md#browser-tools).
const AGENT = join(E2E_DIR, 'support/agents/release-with-browser.mjs')

async function withServer(body: (server: RunningServer) => Promise<void>): Promise<void> {
  const server = await startServer({ agentModule: AGENT })
  try {
    await body(server)
  } finally {
    await server.stop()
  }
}

/** POST /runs requests that carry a result (a tool message) for `toolCallId`. */
function resultRequests(requests: readonly RecordedRequest[], toolCallId: string): RecordedRequest[] {
  return requests.filter(
    (r) =>
      r.method === 'POST' &&
      r.url.endsWith('/api/agent/runs') &&
      ((r.body as { messages?: { role?: string; toolCallId?: string }[] } | null)?.messages ?? []).some(
        (m) => m.role === 'tool' && m.toolCallId === toolCallId,
      ),
  )
}

async function send(page: Page, text: string): Promise<void> {
  await page.locator('#composer').fill(text)
  await page.locator('#composer').press('Enter')
}

// Two browser contexts, a server of their own and a deadline: slower than one page on this shared 2-core machine.
test.describe.configure({ timeout: 120_000 })

test('a response with a browser call and an approval completes: approved, the tool runs, the browser call runs once', async ({
  page,
}) => {
  await withServer(async (server) => {
    const requests = trackRequests(page)
    await openWorkbench(page, server)
    await send(page, 'check the page and deploy v2.1')

    // The run pauses on the approval; the browser call waits (a paused run's calls never run locally).
    await expect(batchForm(page)).toBeVisible()
    await expect(batchForm(page).locator('fieldset.interlude-interrupt')).toHaveCount(1)
    const browserCallId = await toolCall(page, 'read_page_context').getAttribute('data-tool-call-id')
    expect(browserCallId).toBeTruthy()
    expect(resultRequests(requests, browserCallId!)).toHaveLength(0)

    await batchForm(page).getByRole('button', { name: 'Approve all' }).click()
    await submitButton(page).click()

    // The resumed run deploys and hands the saved browser call back (pendingToolCallIds). A saved call never runs
    // unasked (docs/client-contract.md#browser-tools): the page offers it, the person runs it here once, and the
    // turn continues with its result.
    const offer = page.getByTestId('pending-tool-calls')
    await expect(offer).toContainText('read_page_context')
    await expect(toolCall(page, 'deploy')).toHaveAttribute('data-state', 'done')
    expect(resultRequests(requests, browserCallId!)).toHaveLength(0)
    await offer.getByRole('button', { name: 'Run it here' }).click()
    await expect(
      page.getByText(/^All steps ran\. Summary: read_page_context finished; deployed v2\.1 to staging/),
    ).toBeVisible()
    await waitForTurnEnd(page)
    await expect(toolCall(page, 'read_page_context')).toHaveAttribute('data-state', 'done')
    await expect(toolCall(page, 'deploy')).toHaveAttribute('data-state', 'done')
    expect(resultRequests(requests, browserCallId!)).toHaveLength(1)

    const thread = await serverThread(page, server)
    expect(thread.status).toBe('idle')
    expect(thread.state.deployments).toHaveLength(1)
    const results = (
      thread as unknown as { messages: { role: string; toolCallId?: string; content?: string }[] }
    ).messages.filter((m) => m.role === 'tool' && m.toolCallId === browserCallId)
    expect(results).toHaveLength(1)
    expect(JSON.parse(results[0]!.content ?? '{}')).toMatchObject({ title: expect.any(String) })
  })
})

test('after a reload two tabs offer a pending browser call: one claims it and runs the handler once, the other shows it taken', async ({
  page,
}) => {
  await withServer(async (server) => {
    await openWorkbench(page, server)
    // The first page is closed before it could claim the call (its claim never reaches the server): the call stays
    // pending and unclaimed, as after a tab closed at the wrong moment.
    await page.route('**/tool-calls/*/claim', (route) => route.abort('connectionreset'))
    await send(page, 'check the page')
    await expect(toolCall(page, 'read_page_context')).toBeVisible()
    await expect(page.getByTestId('chat-error')).toBeVisible({ timeout: 20_000 })
    await page.unroute('**/tool-calls/*/claim')
    const id = await threadId(page)

    // Reload the first tab and open the same thread in a second one (same session).
    await page.reload()
    const second = await page.context().newPage()
    await second.goto(`${server.url}/?thread=${encodeURIComponent(id)}`)
    const tabs = [page, second]
    const claims: number[] = []
    const results: number[] = []
    for (const tab of tabs)
      tab.on('response', (response) => {
        const request = response.request()
        if (request.method() !== 'POST') return
        if (request.url().endsWith('/claim')) claims.push(response.status())
        const body = request.postDataJSON() as { messages?: { role?: string }[] } | null
        if (request.url().endsWith('/api/agent/runs') && (body?.messages ?? []).some((m) => m.role === 'tool'))
          results.push(response.status())
      })
    for (const tab of tabs) await expect(tab.getByTestId('pending-tool-calls')).toContainText('read_page_context')

    // Both offer to run it; both are told to. One claim wins; the other tab runs nothing and shows the call taken.
    await Promise.all(tabs.map((tab) => tab.getByRole('button', { name: 'Run it here' }).click()))
    for (const tab of tabs) {
      await expect(tab.getByText(/^All steps ran\. Summary: read_page_context finished\./).last()).toBeVisible()
      await expect(tab.getByTestId('pending-tool-calls')).toHaveCount(0)
    }
    // One claim won. The other tab's claim was refused (409), or it read the winner's result first and claimed
    // nothing; either way it ran nothing.
    expect(claims.filter((status) => status === 200)).toHaveLength(1)
    expect(claims.every((status) => status === 200 || status === 409)).toBe(true)
    // The handler ran in one tab: exactly one result set was sent, and admitted.
    expect(results).toEqual([200])
    const taken = await Promise.all(tabs.map((tab) => tab.getByTestId('tool-call-taken').count()))
    expect(taken.sort()).toEqual([0, 1])
    await second.close()
  })
})
