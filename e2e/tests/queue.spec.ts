import type { Page } from '@playwright/test'
import { audit, blocking } from '../support/axe.ts'
import { expect, test } from '../support/fixtures.ts'
import type { RunningServer } from '../support/server.ts'
import { startServer } from '../support/server.ts'
import { openWorkbench, threadId } from '../support/workbench.ts'

/**
 * Many messages, one thread (docs/react-runtime.md#many-messages-one-thread) in the workbench, which opts in with
 * `whileBusy: 'enqueue'`: the composer stays usable while a run streams, messages typed then are queued on the server
 * and shown in order with Cancel, each joins the conversation when its run starts, and a reload shows the queue again.
 */

// Paced tokens: a run streams for about five seconds, long enough to type into on a loaded machine.
const PACING_MS = 300

async function type(page: Page, text: string): Promise<void> {
  await page.locator('#composer').fill(text)
  await page.locator('#composer').press('Enter')
}

const queued = (page: Page) => page.getByTestId('queued-message')
const turns = (page: Page) => page.locator('ol.messages > li[data-role]')

async function userTexts(page: Page): Promise<string[]> {
  return page.locator('ol.messages > li[data-role="user"] .message-text').allTextContents()
}

async function allDone(page: Page): Promise<void> {
  await expect(queued(page)).toHaveCount(0, { timeout: 60_000 })
  await expect(page.locator('.chat-status')).toHaveText('', { timeout: 30_000 })
}

test.describe('queued messages', () => {
  let paced: RunningServer
  test.slow() // several paced runs one after another
  test.beforeEach(async () => {
    paced = await startServer({ pacingMs: PACING_MS })
  })
  test.afterEach(async () => {
    await paced.stop()
  })

  test('type three messages while the first streams; all three answered in order; cancel one from the queue', async ({
    page,
  }) => {
    await openWorkbench(page, paced)
    await type(page, 'first')
    await expect(page.getByRole('button', { name: 'Steer' })).toBeVisible() // the run streams
    for (const text of ['second', 'third', 'fourth', 'fifth']) await type(page, text)
    // Queued in the order typed (the machine may be slow enough for 'second' to have started already).
    await expect(queued(page).last()).toHaveText(/\d\. fifth/)
    const shown = await queued(page).allTextContents()
    expect(shown.map((text) => text.replace(/Cancel$/, ''))).toEqual(
      ['second', 'third', 'fourth', 'fifth'].slice(-shown.length).map((text, i) => `${i + 1}. ${text}`),
    )
    // Not in the conversation before its run starts.
    expect(await userTexts(page)).not.toContain('fifth')
    // The queue panel and the busy composer pass axe like every view (docs/quality.md#accessibility).
    expect(blocking(await audit(page, test.info(), 'queued-messages'))).toEqual([])

    await queued(page)
      .filter({ hasText: 'fifth' })
      .getByRole('button', { name: /^Cancel queued message/ })
      .click()
    await expect(queued(page).filter({ hasText: 'fifth' })).toHaveCount(0)

    // The queue moves up as runs start; each message joins the conversation with its run.
    await expect(queued(page)).toHaveText([/^1\. fourth/], { timeout: 30_000 })
    expect(await userTexts(page)).toEqual(['first', 'second', 'third'])
    await allDone(page)
    expect(await userTexts(page)).toEqual(['first', 'second', 'third', 'fourth'])
    const roles = await turns(page).evaluateAll((items) => items.map((li) => li.getAttribute('data-role')))
    expect(roles).toEqual(['user', 'assistant', 'user', 'assistant', 'user', 'assistant', 'user', 'assistant'])
    await expect(page.getByRole('button', { name: 'Steer' })).toHaveCount(0)
    await expect(page.getByTestId('local-error')).toHaveCount(0)
  })

  test('Steer hands a message typed while the run streams to that turn', async ({ page }) => {
    await openWorkbench(page, paced)
    await type(page, 'first')
    await page.locator('#composer').fill('and mention staging')
    await page.getByRole('button', { name: 'Steer' }).click()
    // In the conversation at once, never in the queue.
    await expect(page.locator('ol.messages > li[data-role="user"] .message-text')).toHaveText([
      'first',
      'and mention staging',
    ])
    await expect(queued(page)).toHaveCount(0)
    await allDone(page)
    expect(await userTexts(page)).toEqual(['first', 'and mention staging'])
    await expect(page.getByTestId('local-error')).toHaveCount(0)
  })

  test('a reload while messages are queued shows the queue again and the rest is answered live', async ({ page }) => {
    await openWorkbench(page, paced)
    await type(page, 'first')
    await expect(page.getByRole('button', { name: 'Steer' })).toBeVisible()
    for (const text of ['second', 'third']) await type(page, text)
    await expect(queued(page).last()).toHaveText(/third/)
    const id = await threadId(page)

    await page.reload()
    expect(await threadId(page)).toBe(id)
    // recover(): the running run is re-attached and the queue is read back from the tab's sessionStorage.
    await expect(queued(page).first()).toBeVisible()
    await allDone(page)
    expect(await userTexts(page)).toEqual(['first', 'second', 'third'])
  })
})
