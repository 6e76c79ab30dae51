import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Page } from '@playwright/test'
import { test as base, expect } from '@playwright/test'
import { SHIPPED_RECORDINGS_DIR } from '../support/paths.ts'
import type { RunningServer } from '../support/server.ts'
import { startServer } from '../support/server.ts'
import {
  DEPLOY,
  PUBLISH,
  batchForm,
  openWorkbench,
  question,
  startRelease,
  submitButton,
  waitForTurnEnd,
} from '../support/workbench.ts'

/**
 * Re-records the recordings shipped with the workbench from real runs: the real workbench in
 * Chromium against the real server with the scripted release assistant (token pacing as in the
 * default CLI, so streaming shows in the replay). Only the title and notes are set afterwards.
 *
 *   INTERLUDE_RECORD=1 pnpm --filter @interlude/e2e exec playwright test --project record
 */
const test = base.extend<{ server: RunningServer }>({
  // eslint-disable-next-line no-empty-pattern
  server: async ({}, use) => {
    const server = await startServer({ pacingMs: 25 })
    try {
      await use(server)
    } finally {
      await server.stop()
    }
  },
})

async function saveRecording(page: Page, file: string, title: string, notes: string): Promise<void> {
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('button', { name: 'Download recording' }).click(),
  ])
  const path = await download.path()
  const recording = JSON.parse(readFileSync(path, 'utf8')) as { meta: Record<string, unknown>; frames: unknown[] }
  recording.meta = { ...recording.meta, title, notes, origin: 'http://127.0.0.1' }
  writeFileSync(join(SHIPPED_RECORDINGS_DIR, file), JSON.stringify(recording, null, 1) + '\n')
}

test('record: release batch, both approved', async ({ page, server }) => {
  await openWorkbench(page, server)
  await startRelease(page)
  await question(page, PUBLISH).getByLabel('Approve').check()
  await question(page, DEPLOY).getByLabel('Approve').check()
  await submitButton(page).click()
  await waitForTurnEnd(page)
  await expect(page.locator('.chat .tool-call[data-state="done"]')).toHaveCount(2)
  await saveRecording(
    page,
    '01-release-approved.json',
    'Release v2.1: both approved',
    'Scripted release assistant, "deploy v2.1 to production": one batch of two tool_call interrupts, both approved; both tools run, then the summary.',
  )
})

test('record: release batch, publish denied and deploy cancelled', async ({ page, server }) => {
  await openWorkbench(page, server)
  await startRelease(page)
  await question(page, PUBLISH).getByLabel('Deny').check()
  await question(page, DEPLOY).getByLabel('Cancel').check()
  await submitButton(page).click()
  await waitForTurnEnd(page)
  await expect(batchForm(page)).toHaveCount(0)
  await saveRecording(
    page,
    '02-release-deny-cancel.json',
    'Release v2.1: publish denied, deploy cancelled',
    'Scripted release assistant, "deploy v2.1 to production": publish_release denied ({ approved: false }), deploy cancelled (status "cancelled", no payload); nothing runs.',
  )
})
