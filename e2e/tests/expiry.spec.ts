import { expect, resumeRequests, trackRequests } from '../support/fixtures.ts'
import { test as base } from '@playwright/test'
import type { RunningServer } from '../support/server.ts'
import { startServer } from '../support/server.ts'
import { batchForm, openWorkbench, startRelease, submitButton } from '../support/workbench.ts'

// A server whose interrupts expire after 3 seconds.
const test = base.extend<{ server: RunningServer }>({
  // eslint-disable-next-line no-empty-pattern
  server: async ({}, use) => {
    const server = await startServer({ interruptTtl: 3 })
    try {
      await use(server)
    } finally {
      await server.stop()
    }
  },
})

test('an expired batch stays visible, says so, and cannot be submitted', async ({ page, server }) => {
  const requests = trackRequests(page)
  await openWorkbench(page, server)
  await startRelease(page)
  await batchForm(page).getByRole('button', { name: 'Approve all' }).click()

  // The expiry is announced when expiresAt passes (the UI re-renders at that moment).
  await expect(page.getByTestId('batch-expired')).toBeVisible({ timeout: 15_000 })
  await expect(page.getByTestId('batch-expired')).toContainText('expired')
  await expect(batchForm(page)).toBeVisible()
  await expect(submitButton(page)).toBeDisabled()
  for (const radio of await batchForm(page).getByRole('radio').all()) await expect(radio).toBeDisabled()
  await expect(batchForm(page).getByRole('button', { name: 'Cancel all' })).toBeDisabled()

  // Even a forced click on the disabled button sends nothing.
  await submitButton(page).click({ force: true })
  await page.keyboard.press('Enter')
  expect(resumeRequests(requests)).toHaveLength(0)
  await expect(page.locator('section.batch[data-expired="true"]')).toBeVisible()
})

test('a reload after the batch expired says so and offers only a new conversation', async ({ page, server }) => {
  await openWorkbench(page, server)
  await startRelease(page)
  await expect(page.getByTestId('batch-expired')).toBeVisible({ timeout: 15_000 })

  // The server's snapshot no longer carries the expired batch; the thread is still paused on it.
  await page.reload()
  const banner = page.getByTestId('thread-expired')
  await expect(banner).toBeVisible()
  await expect(banner).toContainText('expired')
  await expect(page.getByLabel('Message')).toBeDisabled()
  await expect(page.getByRole('button', { name: 'Send' })).toBeDisabled()

  await banner.getByRole('button', { name: 'New conversation' }).click()
  await expect(banner).toBeHidden()
  await expect(page.getByLabel('Message')).toBeEnabled()
})
