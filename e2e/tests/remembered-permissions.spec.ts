import type { Page } from '@playwright/test'
import { expect, resumeRequests, test, trackRequests } from '../support/fixtures.ts'
import {
  DEPLOY,
  PUBLISH,
  batchForm,
  openWorkbench,
  question,
  startRelease,
  submitButton,
  threadId,
  waitForTurnEnd,
} from '../support/workbench.ts'

/** The demo's `publish_release` allows `remember: "thread"` (docs/approvals.md#remembered-permissions); deploy never. */
const RELEASE = (version: string) => `release ${version} to staging`

async function openTab(page: Page, name: 'Chat' | 'Permissions'): Promise<void> {
  await page.getByRole('navigation', { name: 'Views' }).getByRole('button', { name }).click()
}

/** Denies the deploy question of the open batch (the thread's deployments stay untouched) and submits. */
async function denyDeployAndSubmit(page: Page): Promise<void> {
  await question(page, DEPLOY).getByRole('radio', { name: 'Deny' }).check()
  await submitButton(page).click()
  await waitForTurnEnd(page)
}

test.describe('remembered permissions in the workbench (docs/approvals.md#remembered-permissions)', () => {
  test('approve with "Remember this approval", see the rule, the next release skips the question; revoke it and it asks again', async ({
    page,
    server,
  }) => {
    const requests = trackRequests(page)
    await openWorkbench(page, server)
    await startRelease(page, RELEASE('v3.0'))
    const thread = await threadId(page)

    // Approve publish_release and remember it for this conversation; the deploy cannot be remembered.
    const publish = question(page, PUBLISH)
    await publish.getByRole('radio', { name: 'Approve' }).check()
    const remember = publish.getByRole('group', { name: 'Remember this approval' })
    // Only the scopes the tool allows: this conversation, not all of them.
    await expect(remember.getByRole('radio')).toHaveCount(2)
    await expect(remember.getByRole('radio', { name: 'Just this once' })).toBeChecked()
    await remember.getByRole('radio', { name: 'Always in this conversation' }).check()
    await question(page, DEPLOY).getByRole('radio', { name: 'Approve' }).check()
    await expect(question(page, DEPLOY).getByRole('group', { name: 'Remember this approval' })).toHaveCount(0)
    await submitButton(page).click()
    await waitForTurnEnd(page)
    const [resume] = resumeRequests(requests)
    expect(JSON.stringify(resume?.body)).toContain('"remember":"thread"')

    // The rule is listed: tool, arguments, scope, thread, who, when.
    await openTab(page, 'Permissions')
    await expect(page).toHaveURL(/view=permissions/)
    const rules = page.getByRole('table', { name: 'Your remembered permissions' })
    const row = rules.locator('tbody tr').filter({ hasText: thread })
    await expect(row).toHaveCount(1)
    await expect(row.getByRole('cell').nth(0)).toHaveText('publish_release')
    await expect(row.getByRole('cell').nth(1)).toHaveText('any arguments')
    await expect(row.getByTestId('rule-scope')).toHaveText('this conversation')
    await expect(row.locator('time')).toHaveAttribute('datetime', /^\d{4}-\d\d-\d\dT/)

    // With the rule, the next release in this thread asks only about the deploy.
    await openTab(page, 'Chat')
    await startRelease(page, RELEASE('v3.1'))
    await expect(batchForm(page).locator('fieldset.interlude-interrupt')).toHaveCount(1)
    await expect(question(page, DEPLOY)).toHaveCount(1)
    await expect(question(page, PUBLISH)).toHaveCount(0)
    await denyDeployAndSubmit(page)

    // Revoke by keyboard: the confirmation takes the focus, Escape keeps the rule, Enter on "Revoke" revokes.
    await openTab(page, 'Permissions')
    await page.getByRole('button', { name: 'refresh' }).last().click()
    const revoke = row.getByRole('button', { name: 'Revoke the rule for publish_release' })
    await revoke.focus()
    await page.keyboard.press('Enter')
    const confirm = row.getByRole('group', { name: 'Confirm revoking the rule for publish_release' })
    await expect(confirm.getByRole('button', { name: 'Revoke' })).toBeFocused()
    await page.keyboard.press('Escape')
    await expect(confirm).toHaveCount(0)
    await expect(row).toHaveCount(1)
    await revoke.focus()
    await page.keyboard.press('Enter')
    await expect(confirm.getByRole('button', { name: 'Revoke' })).toBeFocused()
    await page.keyboard.press('Enter')
    await expect(page.getByTestId('permissions-outcome')).toHaveText('Revoked: publish_release will ask again.')
    await expect(row).toHaveCount(0)
    await expect(page.getByTestId('permissions-empty')).toHaveText('No remembered permissions.')

    // The next release asks about publish_release again.
    await openTab(page, 'Chat')
    await startRelease(page, RELEASE('v3.2'))
    await expect(question(page, PUBLISH)).toHaveCount(1)
    await expect(question(page, DEPLOY)).toHaveCount(1)
  })
})
