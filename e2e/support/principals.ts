import type { Browser, BrowserContext, Page } from '@playwright/test'
import { expect } from '@playwright/test'
import type { RunningServer, ServerOptions } from './server.ts'
import { startServer } from './server.ts'

/**
 * Two principals (docs/approvals.md): `eng` chats with the release assistant, `mgr` may decide every batch. `ops` is a
 * second approver for the tests that add it (`--token ops=… --approver ops`).
 */
export const TOKENS = { eng: 'eng-secret-e2e', mgr: 'mgr-secret-e2e', ops: 'ops-secret-e2e' } as const
export type Principal = keyof typeof TOKENS

export function startTwoPrincipalServer(options: ServerOptions = {}): Promise<RunningServer> {
  return startServer({
    ...options,
    extraArgs: [
      '--token',
      `eng=${TOKENS.eng}`,
      '--token',
      `mgr=${TOKENS.mgr}`,
      '--approver',
      'mgr',
      ...(options.extraArgs ?? []),
    ],
  })
}

/** A browser context (its own storage) signed in as `who` through `?token=` (moved into sessionStorage at once). */
export async function openAs(
  browser: Browser,
  server: RunningServer,
  who: Principal,
  view: 'chat' | 'approvals' = 'chat',
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext()
  const page = await context.newPage()
  await page.goto(`${server.url}/?token=${TOKENS[who]}${view === 'approvals' ? '&view=approvals' : ''}`)
  await expect(page.getByTestId('mode')).toHaveText('Live')
  await expect(page.getByTestId('signed-in')).toBeVisible()
  // The token never stays in the address.
  expect(new URL(page.url()).searchParams.has('token')).toBe(false)
  if (view === 'approvals') await expect(page.getByTestId('approvals-view')).toBeVisible()
  else await expect(page.locator('#composer')).toBeEnabled()
  return { context, page }
}

/** `GET /threads/:id` as `who` (bearer token), from the test process. */
export async function threadAs(
  server: RunningServer,
  who: Principal,
  threadId: string,
): Promise<{ status: string; state: { deployments?: unknown[]; releases?: unknown[] }; decisions?: unknown[] }> {
  const response = await fetch(`${server.url}/api/agent/threads/${encodeURIComponent(threadId)}`, {
    headers: { Authorization: `Bearer ${TOKENS[who]}` },
  })
  expect(response.status).toBe(200)
  return (await response.json()) as never
}

/** The Approvals view's entry for a thread. */
export function approvalItem(page: Page, threadId: string) {
  return page.locator(`.approvals .inbox-item[data-thread-id="${threadId}"]`)
}
