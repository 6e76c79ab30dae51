import { join } from 'node:path'
import type { Page } from '@playwright/test'
import { audit, blocking } from '../support/axe.ts'
import { expect, test } from '../support/fixtures.ts'
import { SCREENSHOTS } from '../support/paths.ts'
import type { RunningServer } from '../support/server.ts'
import type { ReleaseState } from '../support/workbench.ts'
import {
  RELEASE_PROMPT,
  batchForm,
  checkState,
  openWorkbench,
  startRelease,
  submitButton,
  threadId,
  waitForTurnEnd,
} from '../support/workbench.ts'

/**
 * Time travel in the workbench (apps/workbench/README.md#time-travel): a thread made by a real run of the release
 * assistant is opened for replay from the server's log (no browser recording), forked at a frame, and answered
 * differently in a "what if" fork; the parent never changes.
 */

/** "deploy v2.1 to production", both approved: the parent thread with its one deployment. */
async function approvedRelease(page: Page, server: RunningServer): Promise<string> {
  await openWorkbench(page, server)
  await startRelease(page)
  await batchForm(page).getByRole('button', { name: 'Approve all' }).click()
  await submitButton(page).click()
  await waitForTurnEnd(page)
  await checkState(page, server, (state) => expect(state.deployments).toHaveLength(1))
  return threadId(page)
}

/** Opens a stored thread from the server's list (Replay ▾ → Stored threads) and waits for its replay. */
async function openStored(page: Page, id: string) {
  await page.locator('.menu summary').click()
  await page.getByRole('button', { name: 'Stored threads (server)…' }).click()
  const stored = page.getByRole('region', { name: 'Stored threads' })
  await stored.locator(`li[data-thread-id="${id}"]`).getByRole('button', { name: RELEASE_PROMPT }).click()
  const replay = page.getByTestId('replay-view')
  await expect(replay).toBeVisible()
  await expect(replay.locator('.replay-banner')).toContainText('read from the server')
  return replay
}

async function storedThread(page: Page, server: RunningServer, id: string) {
  const response = await page.request.get(`${server.url}/api/agent/threads/${id}`)
  expect(response.status()).toBe(200)
  return (await response.json()) as { status: string; state: ReleaseState; parent?: unknown }
}

test.describe('time travel', () => {
  test('a stored thread replays from the server; "What if…" denies in a fork, the parent keeps its deployment', async ({
    page,
    server,
  }, testInfo) => {
    const parentId = await approvedRelease(page, server)
    const replay = await openStored(page, parentId)

    // The server's log in the usual player: the paused batch and the answers it got.
    await replay.getByRole('button', { name: 'batch 1' }).click()
    const inspector = replay.getByLabel('Inspector')
    await expect(inspector.getByTestId('inspector-batch')).toContainText('publish_release')
    await expect(replay.locator('.replay-chat')).toContainText('Both steps need your approval.')
    await expect(page.getByRole('region', { name: 'Branches' })).toContainText('this thread')
    const findings = blocking(await audit(page, testInfo, 'stored-thread-replay'))
    expect(findings).toEqual([])
    const shot = join(SCREENSHOTS, 'time-travel.png')
    await page.screenshot({ path: shot })
    await testInfo.attach('time-travel', { path: shot, contentType: 'image/png' })

    // What if I had denied? A fork paused at the same question opens in the live chat.
    await page
      .getByRole('region', { name: 'Time travel at this frame' })
      .getByRole('button', { name: 'What if…' })
      .click()
    await expect(page.getByTestId('mode')).toHaveText('Live')
    await expect.poll(() => threadId(page)).not.toBe(parentId)
    const forkId = await threadId(page)
    await expect(page).toHaveURL(new RegExp(`thread=${forkId}`))
    await expect(batchForm(page)).toBeVisible()
    await batchForm(page).getByRole('button', { name: 'Deny all' }).click()
    await submitButton(page).click()
    await waitForTurnEnd(page)

    // The fork ends with no deployment; the parent is as it was.
    await checkState(page, server, (state) => expect(state.deployments ?? []).toHaveLength(0))
    const fork = await storedThread(page, server, forkId)
    expect(fork.parent).toMatchObject({ threadId: parentId })
    const parent = await storedThread(page, server, parentId)
    expect(parent.status).toBe('idle')
    expect(parent.state.deployments).toHaveLength(1)
    expect(parent.parent).toBeUndefined()
  })

  test('"Fork here" on a frame opens the fork live; the parent’s branch tree lists it', async ({ page, server }) => {
    const parentId = await approvedRelease(page, server)
    const replay = await openStored(page, parentId)

    // The frame where the plan was streamed and the run paused: fork after the plan.
    await replay.getByRole('button', { name: 'batch 1' }).click()
    const here = page.getByRole('region', { name: 'Time travel at this frame' })
    await expect(here).toContainText('after the assistant message “Plan: publish release v2.1')
    await here.getByRole('button', { name: 'Fork here' }).click()
    await expect(page.getByTestId('mode')).toHaveText('Live')
    await expect.poll(() => threadId(page)).not.toBe(parentId)
    const forkId = await threadId(page)
    await expect(page.getByRole('main', { name: 'Live chat' })).toContainText('Plan: publish release v2.1')
    await expect(page.getByRole('main', { name: 'Live chat' })).not.toContainText('All steps ran.')
    const fork = await storedThread(page, server, forkId)
    expect(fork.parent).toMatchObject({ threadId: parentId, at: { messageId: expect.any(String) } })

    // Back in the stored threads, the parent's tree shows the fork; the fork's own tree names its origin.
    await openStored(page, parentId)
    const branches = page.getByRole('region', { name: 'Branches' })
    await expect(branches.locator(`li[data-thread-id="${forkId}"]`)).toContainText('after message')
    await branches.locator(`li[data-thread-id="${forkId}"]`).getByRole('button').click()
    await expect(branches.locator(`li[data-thread-id="${forkId}"]`)).toContainText('this thread')
    await expect(branches.locator(`li[data-thread-id="${parentId}"]`).getByRole('button').first()).toBeVisible()
    const parent = await storedThread(page, server, parentId)
    expect(parent.state.deployments).toHaveLength(1)
  })
})
