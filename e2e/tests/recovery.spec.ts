import { expect, test } from '../support/fixtures.ts'
import { startServer } from '../support/server.ts'
import {
  batchForm,
  checkState,
  openWorkbench,
  startRelease,
  submitButton,
  threadId,
  toolCall,
  waitForTurnEnd,
} from '../support/workbench.ts'

test.describe('recovery', () => {
  test('a reload brings the paused batch back and answering it works', async ({ page, server }) => {
    await openWorkbench(page, server)
    await startRelease(page)
    const id = await threadId(page)
    expect(page.url()).toContain(`thread=${id}`)

    await page.reload()
    // recover(): the server snapshot restores the messages and the pending batch (a fresh local id).
    await expect(batchForm(page)).toBeVisible()
    expect(await threadId(page)).toBe(id)
    await expect(batchForm(page).locator('fieldset.interlude-interrupt')).toHaveCount(2)
    await expect(toolCall(page, 'deploy')).toHaveAttribute('data-state', 'awaiting')

    await batchForm(page).getByRole('button', { name: 'Approve all' }).click()
    await submitButton(page).click()
    await waitForTurnEnd(page)
    await expect(toolCall(page, 'deploy')).toHaveAttribute('data-state', 'done')
    await checkState(page, server, (state) => expect(state.deployments).toHaveLength(1))
  })

  test('the server is killed and restarted while paused, then the batch is answered', async ({ page, server }) => {
    await openWorkbench(page, server)
    await startRelease(page)

    await server.kill() // SIGKILL: no shutdown hooks run
    const restarted = await startServer({ dbPath: server.dbPath, port: server.port })
    try {
      // The same page answers the batch it already shows; the new process admits it from SQLite.
      await batchForm(page).getByRole('button', { name: 'Approve all' }).click()
      await submitButton(page).click()
      await waitForTurnEnd(page)
      await expect(toolCall(page, 'publish_release')).toHaveAttribute('data-state', 'done')
      await expect(toolCall(page, 'deploy')).toHaveAttribute('data-state', 'done')
      await checkState(page, restarted, (state) => {
        expect(state.releases).toHaveLength(1)
        expect(state.deployments).toHaveLength(1)
      })
    } finally {
      await restarted.stop()
    }
  })

  test('the approval inbox lists the paused thread and opens it from another conversation', async ({
    page,
    server,
  }) => {
    await openWorkbench(page, server)
    await startRelease(page)
    const paused = await threadId(page)

    await page.getByRole('button', { name: 'New conversation' }).click()
    await expect(batchForm(page)).toHaveCount(0)
    expect(await threadId(page)).not.toBe(paused)
    const inbox = page.getByRole('list', { name: 'Threads waiting for answers' })
    await expect(inbox.getByRole('button')).toHaveCount(1)
    await expect(inbox.getByRole('button')).toContainText('2 waiting')

    await inbox.getByRole('button').click()
    await expect(batchForm(page)).toBeVisible()
    expect(await threadId(page)).toBe(paused)
    await batchForm(page).getByRole('button', { name: 'Approve all' }).click()
    await submitButton(page).click()
    await waitForTurnEnd(page)
    await checkState(page, server, (state) => expect(state.deployments).toHaveLength(1))
    await expect(page.getByText('No thread is waiting for answers.')).toBeVisible()
  })

  test('a failure after acknowledgement shows the recovery banner; New conversation starts over', async ({ page }) => {
    // Slow token pacing keeps the resumed run streaming long enough to kill the server mid-turn.
    const first = await startServer({ pacingMs: 150 })
    let second: Awaited<ReturnType<typeof startServer>> | undefined
    try {
      await openWorkbench(page, first)
      await startRelease(page)
      const before = await threadId(page)
      await batchForm(page).getByRole('button', { name: 'Approve all' }).click()
      await submitButton(page).click()
      // The batch disappears at the matching RUN_STARTED: the resume is acknowledged.
      await expect(batchForm(page)).toHaveCount(0)
      await expect(page.locator('.chat-status')).toHaveText('Continuing the same turn…')
      await first.kill()

      // Reconnecting to the event log fails: the SDK requires recovery; the UI offers a new thread.
      const banner = page.locator('.banner.recovery')
      await expect(banner).toBeVisible({ timeout: 30_000 })
      await expect(banner).toHaveAttribute('role', 'alert')
      await expect(page.locator('#composer')).toBeDisabled()

      second = await startServer({ dbPath: first.dbPath, port: first.port })
      await banner.getByRole('button', { name: 'New conversation' }).click()
      await expect(banner).toHaveCount(0)
      expect(await threadId(page)).not.toBe(before)
      await expect(page.locator('.chat .message')).toHaveCount(0)
      await page.locator('#composer').fill('hello')
      await page.locator('#composer').press('Enter')
      await expect(page.locator('.chat .message-assistant')).toHaveCount(1)
    } finally {
      await second?.stop()
      await first.stop()
    }
  })
})
