import { expect, resumeRequests, trackRequests } from '../support/fixtures.ts'
import type { Page } from '@playwright/test'
import { test as base } from '@playwright/test'
import type { RunningServer } from '../support/server.ts'
import { startServer } from '../support/server.ts'
import { batchForm, openWorkbench, serverThread, startRelease, submitButton } from '../support/workbench.ts'

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

// With the `keep` policy an expired batch stays open (and visible) until it is closed, so the page can be checked
// while it is expired; with `deny` (below, the default) the server decides it a moment later. The close itself and
// the other policies are in expiry-policies.spec.ts.
test('an expired batch stays visible, says so, and cannot be submitted', async ({ page }) => {
  const server = await startServer({ interruptTtl: 3, extraArgs: ['--on-expiry', 'keep'] })
  try {
    await expiredBatchIsClosedToAnswers(page, server)
  } finally {
    await server.stop()
  }
})

async function expiredBatchIsClosedToAnswers(page: Page, server: RunningServer): Promise<void> {
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
}

test('after the deadline the server denies the batch: a reload shows the outcome and the thread goes on', async ({
  page,
  server,
}) => {
  await openWorkbench(page, server)
  await startRelease(page)
  // The open page shows the deadline passing: the expired notice, or — when the sweep decided within the moment after
  // `expiresAt`, before the page re-rendered — the system's decision right away (the notice itself is checked above,
  // with `keep`).
  await expect(
    page
      .getByTestId('batch-expired')
      .or(page.getByText(/^Denied by the deadline via expiry/))
      .first(),
  ).toBeVisible({ timeout: 15_000 })

  // docs/approvals.md#deadlines: the expiry sweep denies both approvals (the default for tools), the model is told and
  // the turn ends. Nobody has to answer, and the thread is not stranded.
  await expect.poll(async () => (await serverThread(page, server)).status, { timeout: 15_000 }).toBe('idle')
  await page.reload()
  await expect(page.getByText(/^Nothing ran\. Summary: .*was denied \(expired\)/)).toBeVisible()
  await expect(page.locator('section.batch')).toHaveCount(0)

  await page.locator('#composer').fill('hello')
  await page.locator('#composer').press('Enter')
  await expect(page.getByText(/^I can publish and deploy releases/)).toBeVisible()
})
