import type { Page } from '@playwright/test'
import { expect, resumeRequests, test, trackRequests } from '../support/fixtures.ts'
import {
  DEPLOY,
  PUBLISH,
  batchForm,
  openWorkbench,
  question,
  checkState,
  startRelease,
  submitButton,
  toolCall,
  waitForTurnEnd,
} from '../support/workbench.ts'

test.describe('answering the release batch', () => {
  test('approve all: both tools run once and the turn continues', async ({ page, server }) => {
    const requests = trackRequests(page)
    await openWorkbench(page, server)
    await startRelease(page)
    await expect(toolCall(page, 'publish_release')).toHaveAttribute('data-state', 'awaiting')

    await batchForm(page).getByRole('button', { name: 'Approve all' }).click()
    await submitButton(page).click()
    await waitForTurnEnd(page)

    await expect(toolCall(page, 'publish_release')).toHaveAttribute('data-state', 'done')
    await expect(toolCall(page, 'deploy')).toHaveAttribute('data-state', 'done')
    await checkState(page, server, (state) => {
      expect(state.releases).toEqual([expect.objectContaining({ version: 'v2.1' })])
      expect(state.deployments).toEqual([expect.objectContaining({ version: 'v2.1', environment: 'production' })])
    })
    const resumes = resumeRequests(requests)
    expect(resumes).toHaveLength(1)
    expect((resumes[0]!.body as { resume: unknown[] }).resume).toEqual([
      expect.objectContaining({ status: 'resolved', payload: { approved: true } }),
      expect.objectContaining({ status: 'resolved', payload: { approved: true } }),
    ])
  })

  test('deny one and edit the other: the edited arguments replace the original ones', async ({ page, server }) => {
    const requests = trackRequests(page)
    await openWorkbench(page, server)
    await startRelease(page)

    await question(page, PUBLISH).getByLabel('Deny').check()
    const deploy = question(page, DEPLOY)
    await deploy.getByLabel('Approve').check()
    await deploy.getByLabel('Edit arguments').check()
    await deploy.getByLabel('Environment').selectOption({ label: 'staging' })
    await submitButton(page).click()
    await waitForTurnEnd(page)

    await expect(toolCall(page, 'publish_release')).toHaveAttribute('data-state', 'denied')
    await expect(toolCall(page, 'deploy')).toHaveAttribute('data-state', 'done')
    await expect(toolCall(page, 'deploy').locator('.tool-result')).toContainText('"environment":"staging"')
    await checkState(page, server, (state) => {
      expect(state.releases ?? []).toEqual([])
      expect(state.deployments).toEqual([expect.objectContaining({ version: 'v2.1', environment: 'staging' })])
    })
    const [resume] = resumeRequests(requests)
    expect((resume!.body as { resume: unknown[] }).resume).toEqual([
      expect.objectContaining({ status: 'resolved', payload: { approved: false } }),
      expect.objectContaining({
        status: 'resolved',
        payload: { approved: true, editedArgs: { version: 'v2.1', environment: 'staging' } },
      }),
    ])
  })

  test('cancel all: every entry is cancelled without payload and nothing runs', async ({ page, server }) => {
    const requests = trackRequests(page)
    await openWorkbench(page, server)
    await startRelease(page)

    await batchForm(page).getByRole('button', { name: 'Cancel all' }).click()
    await submitButton(page).click()
    await waitForTurnEnd(page)

    await checkState(page, server, (state) => {
      expect(state.releases ?? []).toEqual([])
      expect(state.deployments ?? []).toEqual([])
    })
    const [resume] = resumeRequests(requests)
    const entries = (resume!.body as { resume: Record<string, unknown>[] }).resume
    expect(entries.map((e) => e.status)).toEqual(['cancelled', 'cancelled'])
    expect(entries.every((e) => !('payload' in e))).toBe(true)
  })

  test('double-click on submit sends exactly one resume request', async ({ page, server }) => {
    const requests = trackRequests(page)
    await openWorkbench(page, server)
    await startRelease(page)

    await batchForm(page).getByRole('button', { name: 'Approve all' }).click()
    await submitButton(page).dblclick()
    await waitForTurnEnd(page)

    expect(resumeRequests(requests)).toHaveLength(1)
    await expect(page.getByTestId('local-error')).toHaveCount(0)
    await expect(page.getByTestId('chat-error')).toHaveCount(0)
    await checkState(page, server, (state) => expect(state.deployments).toHaveLength(1))
  })

  test('fill in: an input_required question answered from its schema', async ({ page, server }) => {
    const requests = trackRequests(page)
    await openWorkbench(page, server)
    await page.locator('#composer').fill('please ask me to choose an environment')
    await page.locator('#composer').press('Enter')
    await expect(batchForm(page)).toBeVisible()

    const form = batchForm(page)
    await form.getByLabel('Environment').selectOption({ label: 'staging' })
    await form.getByLabel('Notes').fill('after the freeze')
    await submitButton(page).click()
    await waitForTurnEnd(page)

    await expect(page.locator('.chat .message-assistant').last()).toContainText('You chose staging')
    await expect(page.locator('.chat .message-assistant').last()).toContainText('after the freeze')
    const [resume] = resumeRequests(requests)
    expect((resume!.body as { resume: unknown[] }).resume).toEqual([
      expect.objectContaining({ status: 'resolved', payload: { environment: 'staging', notes: 'after the freeze' } }),
    ])
  })

  test('keyboard only: answer both questions and submit without the mouse', async ({ page, server }) => {
    await openWorkbench(page, server)
    await page.locator('#composer').focus()
    await page.keyboard.type('deploy v2.1 to production')
    await page.keyboard.press('Enter')
    await expect(batchForm(page)).toBeVisible()

    // Tab into the first question's radio group, choose Approve with Space; same for the second.
    const approveRadios = batchForm(page).getByRole('radio', { name: 'Approve' })
    for (const index of [0, 1]) {
      await tabUntil(page, async () => await approveRadios.nth(index).evaluate((el) => el === document.activeElement))
      await page.keyboard.press('Space')
      await expect(approveRadios.nth(index)).toBeChecked()
    }
    await tabUntil(page, async () => await submitButton(page).evaluate((el) => el === document.activeElement))
    await page.keyboard.press('Enter')
    await waitForTurnEnd(page)

    await checkState(page, server, (state) => {
      expect(state.releases).toHaveLength(1)
      expect(state.deployments).toHaveLength(1)
    })
  })
})

async function tabUntil(page: Page, focused: () => Promise<boolean>, max = 60): Promise<void> {
  for (let i = 0; i < max; i++) {
    if (await focused()) return
    await page.keyboard.press('Tab')
  }
  throw new Error(`the target was not reached with ${max} Tab presses`)
}
