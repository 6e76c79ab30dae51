import type { Page } from '@playwright/test'
import type { RunningServer } from '../support/server.ts'
import { expect, test as base } from '@playwright/test'
import { audit, blocking } from '../support/axe.ts'
import { approvalItem, openAs, startTwoPrincipalServer } from '../support/principals.ts'
import { startRelease, threadId } from '../support/workbench.ts'

// axe-core on every view of the workbench (docs/quality.md#accessibility): no critical, serious or moderate finding.
const test = base.extend<{ server: RunningServer }>({
  // eslint-disable-next-line no-empty-pattern
  server: async ({}, use) => {
    const server = await startTwoPrincipalServer()
    try {
      await use(server)
    } finally {
      await server.stop()
    }
  },
})

// Six audits of large pages on a shared 2-core machine.
test.describe.configure({ timeout: 300_000 })

/** Every view is audited before the test fails, so one run lists all that is wrong. */
const failures: Record<string, unknown> = {}
async function expectClean(page: Page, name: string): Promise<void> {
  const findings = blocking(await audit(page, test.info(), name))
  if (findings.length > 0) failures[name] = findings
}

test('every workbench view passes axe: chat, a paused batch, Approvals, Permissions, replay', async ({
  browser,
  server,
}) => {
  const eng = await openAs(browser, server, 'eng')
  await expectClean(eng.page, 'chat')

  await startRelease(eng.page)
  const id = await threadId(eng.page)
  await expectClean(eng.page, 'paused-batch')

  const mgr = await openAs(browser, server, 'mgr', 'approvals')
  await expect(approvalItem(mgr.page, id)).toBeVisible()
  await expectClean(mgr.page, 'approvals-inbox')
  await approvalItem(mgr.page, id).click()
  await expect(mgr.page.locator('.approvals .interlude-interrupt-form')).toBeVisible()
  await expectClean(mgr.page, 'approvals-batch')

  await eng.page.getByRole('navigation', { name: 'Views' }).getByRole('button', { name: 'Permissions' }).click()
  await expect(eng.page).toHaveURL(/view=permissions/)
  await expectClean(eng.page, 'permissions')

  // The replay of a shipped recording, paused on its first batch with the inspector open.
  await eng.page.getByRole('navigation', { name: 'Views' }).getByRole('button', { name: 'Chat' }).click()
  await eng.page.locator('.menu summary').click()
  await eng.page.getByRole('button', { name: /both approved/i }).click()
  const replay = eng.page.getByTestId('replay-view')
  await expect(replay).toBeVisible()
  await expectClean(eng.page, 'replay')
  await replay.getByRole('button', { name: 'batch 1' }).click()
  await expect(replay.getByLabel('Inspector').getByTestId('inspector-batch')).toBeVisible()
  await expectClean(eng.page, 'replay-batch')
  expect(failures).toEqual({})
})
