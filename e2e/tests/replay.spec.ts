import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { expect, test, trackRequests } from '../support/fixtures.ts'
import { SCREENSHOTS } from '../support/paths.ts'
import {
  DEPLOY,
  PUBLISH,
  batchForm,
  openWorkbench,
  question,
  checkState,
  startRelease,
  submitButton,
  waitForTurnEnd,
} from '../support/workbench.ts'

test.describe('replay', () => {
  test('a shipped recording replays with zero network requests; live controls are disabled', async ({
    page,
    server,
  }, testInfo) => {
    await openWorkbench(page, server)
    // Let the live view settle (its inbox request) before counting.
    await expect(page.getByText('No thread is waiting for answers.')).toBeVisible()
    await page.waitForLoadState('networkidle')

    // From here on, every request is counted and refused.
    const requests = trackRequests(page)
    await page.route('**/*', (route) => route.abort())

    await page.locator('.menu summary').click()
    await page.getByRole('button', { name: /both approved/i }).click()
    await expect(page.getByTestId('mode')).toHaveText('Replay')
    const replay = page.getByTestId('replay-view')
    await expect(replay).toBeVisible()

    // Every control of the live session is disabled or hidden.
    await expect(page.locator('.live-container')).toBeHidden()
    for (const button of await replay.locator('.replay-chat button').all()) await expect(button).toBeDisabled()
    await expect(replay.locator('#replay-composer')).toBeDisabled()

    // Play the whole recording fast, then walk it frame by frame.
    await replay.getByLabel('Pacing').selectOption('fixed')
    await replay.getByLabel('Speed').selectOption('8')
    await replay.getByRole('button', { name: 'Play' }).click()
    await expect(replay.locator('.frame-counter')).toHaveText(/Frame (\d+) \/ \1\b/, { timeout: 30_000 })
    await replay.getByRole('button', { name: 'Step back' }).click()
    await replay.getByRole('button', { name: 'Step forward' }).click()

    // The paused frame: the SDK batch paired with the form choices of that moment.
    await replay.getByRole('button', { name: 'batch 1' }).click()
    const inspector = replay.getByLabel('Inspector')
    await expect(inspector.getByTestId('inspector-batch')).toContainText('publish_release')
    await expect(replay.locator('.batch-readonly')).toBeVisible()
    for (const button of await replay.locator('.batch-readonly button').all()) await expect(button).toBeDisabled()
    // Walk forward to the submitted form and its request outcome.
    await replay.locator('.frame-form').filter({ hasText: 'submit' }).first().click()
    await expect(inspector.getByTestId('inspector-form')).toContainText('"entries"')
    await replay.locator('.frame-request-start').filter({ hasText: '(resume)' }).first().click()
    await replay.getByRole('button', { name: 'Step forward' }).click()
    await expect(inspector.getByTestId('request-outcome')).toContainText('HTTP 200')
    await expect(inspector.getByTestId('inspector-raw')).toBeVisible()

    const shot = join(SCREENSHOTS, 'replay.png')
    await page.screenshot({ path: shot })
    await testInfo.attach('replay', { path: shot, contentType: 'image/png' })

    expect(requests, `replay made requests: ${requests.map((r) => `${r.method} ${r.url}`).join(', ')}`).toHaveLength(0)
    await page.unroute('**/*')
  })

  test('"Return to Live" continues with the current live batch and its choices', async ({ page, server }, testInfo) => {
    await openWorkbench(page, server)
    await startRelease(page)
    await question(page, PUBLISH).getByLabel('Deny').check()

    const shot = join(SCREENSHOTS, 'paused.png')
    await page.screenshot({ path: shot, fullPage: true })
    await testInfo.attach('paused', { path: shot, contentType: 'image/png' })

    // Replay this very session up to now: no request while it is shown.
    const requests = trackRequests(page)
    await page.locator('.menu summary').click()
    await page.getByRole('button', { name: /^This session/ }).click()
    const replay = page.getByTestId('replay-view')
    await expect(replay).toBeVisible()
    await replay.getByRole('button', { name: 'Last frame' }).click()
    await expect(replay.getByTestId('inspector-form')).toContainText('deny')
    expect(requests).toHaveLength(0)

    await replay.getByRole('button', { name: 'Return to Live' }).click()
    await expect(page.getByTestId('mode')).toHaveText('Live')
    await expect(question(page, PUBLISH).getByLabel('Deny')).toBeChecked()
    await question(page, DEPLOY).getByLabel('Approve').check()
    await submitButton(page).click()
    await waitForTurnEnd(page)
    await checkState(page, server, (state) => {
      expect(state.releases ?? []).toEqual([])
      expect(state.deployments).toHaveLength(1)
    })
    await expect(batchForm(page)).toHaveCount(0)
  })

  test('a downloaded recording loads back from the file and replays the same run', async ({ page, server }) => {
    await openWorkbench(page, server)
    await startRelease(page)
    await batchForm(page).getByRole('button', { name: 'Approve all' }).click()
    await submitButton(page).click()
    await waitForTurnEnd(page)

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download recording' }).click(),
    ])
    expect(download.suggestedFilename()).toMatch(/^interlude-recording-.*\.json$/)
    const path = await download.path()
    const recording = JSON.parse(readFileSync(path, 'utf8')) as {
      version: number
      frames: { kind: string; purpose?: string; phase?: string }[]
    }
    expect(recording.version).toBe(1)
    // The run, the thread followed while the batch was pending (a decision made elsewhere would arrive there), the
    // resume; follow reconnects (if any) come between.
    const purposes = recording.frames.filter((f) => f.kind === 'request-start').map((f) => f.purpose)
    expect(purposes.filter((p) => p !== 'follow')).toEqual(['run', 'resume'])
    expect(purposes.slice(0, 2)).toEqual(['run', 'follow'])
    expect(recording.frames.some((f) => f.kind === 'form' && f.phase === 'submit')).toBe(true)
    expect(recording.frames.filter((f) => f.kind === 'sse-event').length).toBeGreaterThan(10)

    const requests = trackRequests(page)
    await page.locator('.menu summary').click()
    await page.locator('input[type="file"]').setInputFiles(path)
    const replay = page.getByTestId('replay-view')
    await expect(replay).toContainText('(file ')
    await expect(replay.locator('.frame-counter')).toContainText(`/ ${recording.frames.length}`)
    await replay.getByRole('button', { name: 'Last frame' }).click()
    await expect(replay.locator('.replay-chat .tool-call[data-state="done"]')).toHaveCount(2)
    expect(requests).toHaveLength(0)

    // A file that is not a recording is refused with the reason, as text.
    await page.locator('.menu summary').click()
    await page
      .locator('input[type="file"]')
      .setInputFiles({ name: 'other.json', mimeType: 'application/json', buffer: Buffer.from('{"version":9}') })
    await expect(page.getByRole('alert')).toContainText('unsupported recording version 9')
  })
})
