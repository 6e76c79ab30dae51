import type { Locator, Page } from '@playwright/test'
import { expect } from '@playwright/test'
import type { RunningServer } from './server.ts'

export const RELEASE_PROMPT = 'deploy v2.1 to production'

/** Opens the workbench served by `server` and waits until the live chat is ready. */
export async function openWorkbench(page: Page, server: RunningServer): Promise<void> {
  await page.goto(server.url + '/')
  await expect(page.getByTestId('mode')).toHaveText('Live')
  await expect(page.locator('#composer')).toBeEnabled()
}

/** Sends a message and waits until the release assistant's approval batch is shown. */
export async function startRelease(page: Page, prompt = RELEASE_PROMPT): Promise<void> {
  await page.locator('#composer').fill(prompt)
  await page.locator('#composer').press('Enter')
  await expect(batchForm(page)).toBeVisible()
}

export function batchForm(page: Page): Locator {
  return page.locator('.interlude-interrupt-form')
}

/** The fieldset of one interrupt, found by its message ("Publish release v2.1?", "Deploy …"). */
export function question(page: Page, message: RegExp): Locator {
  return batchForm(page)
    .locator('fieldset.interlude-interrupt')
    .filter({ has: page.locator('legend', { hasText: message }) })
}

export const PUBLISH = /^Publish release/
export const DEPLOY = /^Deploy /

export function submitButton(page: Page): Locator {
  return batchForm(page).getByRole('button', { name: 'Submit answers' })
}

/** Waits until the resumed turn has finished: the batch is gone and nothing is running. */
export async function waitForTurnEnd(page: Page): Promise<void> {
  await expect(page.locator('section.batch')).toHaveCount(0)
  await expect(page.locator('.chat-status')).toHaveText('')
  await expect(page.locator('#composer')).toBeEnabled()
}

export async function threadId(page: Page): Promise<string> {
  return (await page.getByTestId('thread-id').textContent())?.trim() ?? ''
}

export interface ReleaseState {
  readonly releases?: readonly { readonly version: string }[]
  readonly deployments?: readonly {
    readonly version: string
    readonly environment: string
    readonly operationId: string
  }[]
}

/** The server's snapshot of the current thread, fetched with the page's session cookie. */
export async function serverThread(
  page: Page,
  server: RunningServer,
): Promise<{ status: string; state: ReleaseState; interrupts?: unknown[] }> {
  const response = await page.request.get(`${server.url}/api/agent/threads/${await threadId(page)}`)
  expect(response.status()).toBe(200)
  return (await response.json()) as { status: string; state: ReleaseState; interrupts?: unknown[] }
}

/** The shared agent state as the live client holds it (the "Agent state" panel). */
export async function agentState(page: Page): Promise<ReleaseState> {
  return JSON.parse((await page.getByTestId('agent-state').textContent()) ?? 'null') as ReleaseState
}

/**
 * Runs `check` on the state the workbench holds (from the server's STATE_SNAPSHOT) and on the
 * server's own snapshot of the thread (`GET /threads/:id`).
 */
export async function checkState(
  page: Page,
  server: RunningServer,
  check: (state: ReleaseState, source: 'client' | 'server') => void,
): Promise<void> {
  check(await agentState(page), 'client')
  const thread = await serverThread(page, server)
  expect(thread.status).toBe('idle')
  check(thread.state, 'server')
}

/** The tool-call cards of the conversation with their state (awaiting, done, denied, …). */
export function toolCall(page: Page, name: string): Locator {
  return page.locator('.chat .tool-call').filter({ has: page.locator('.tool-name', { hasText: name }) })
}
