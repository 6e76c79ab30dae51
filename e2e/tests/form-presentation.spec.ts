import type { Page } from '@playwright/test'
import { expect, resumeRequests, test, trackRequests } from '../support/fixtures.ts'
import {
  DEPLOY,
  batchForm,
  openWorkbench,
  question,
  startRelease,
  toolCall,
  waitForTurnEnd,
} from '../support/workbench.ts'

// A fixed locale and zone so the date pickers take the same keystrokes everywhere.
test.use({ locale: 'en-US', timezoneId: 'UTC' })

const SCHEDULE = 'please schedule a maintenance window'

/** Presses Tab until `name` is focused (what a keyboard user does), failing after a bound. */
async function tabTo(page: Page, name: RegExp | string): Promise<void> {
  for (let i = 0; i < 40; i++) {
    await page.keyboard.press('Tab')
    const focused = await page.evaluate(() => {
      const el = document.activeElement as HTMLElement | null
      if (!el) return ''
      const labelled = el.id ? document.querySelector(`label[for="${CSS.escape(el.id)}"]`)?.textContent : undefined
      return labelled ?? el.getAttribute('aria-label') ?? el.textContent ?? ''
    })
    if (typeof name === 'string' ? focused.trim() === name : name.test(focused)) return
  }
  throw new Error(`Tab never reached ${String(name)}`)
}

test.describe('forms present the question (docs/client-contract.md#forms)', () => {
  test('a rich question: labelled choices, formats, widgets and descriptions, answered by keyboard only', async ({
    page,
    server,
  }) => {
    const requests = trackRequests(page)
    await openWorkbench(page, server)
    await startRelease(page, SCHEDULE)
    const form = batchForm(page)

    await expect(form.getByText('When the release goes out, how, and who is on call.')).toBeVisible()
    const strategy = form.getByRole('group', { name: 'Rollout strategy' })
    await expect(strategy.getByRole('radio')).toHaveCount(3)
    await expect(strategy.getByRole('radio', { name: 'Canary (5% first)' })).toHaveAccessibleDescription(
      'Safest; takes about an hour.',
    )
    await expect(strategy).toHaveAccessibleDescription('How traffic moves to the new version.')
    await expect(form.getByLabel('Region').locator('option')).toHaveText([
      'Choose…',
      'Europe (Ireland)',
      'US East (Virginia)',
    ])
    await expect(form.getByLabel('Day')).toHaveAttribute('type', 'date')
    await expect(form.getByLabel('Start time')).toHaveAttribute('type', 'datetime-local')
    await expect(form.getByLabel('Start time')).toHaveAccessibleDescription('In your local time.')
    await expect(form.getByLabel('On-call contact')).toHaveAttribute('type', 'email')
    await expect(form.getByLabel('Runbook link')).toHaveAttribute('type', 'url')
    await expect(form.getByLabel('Notes for on-call')).toHaveJSProperty('tagName', 'TEXTAREA')

    // Keyboard only from here: Tab into the radio group, arrows choose, typing fills the pickers.
    await page.locator('#composer').focus()
    await tabTo(page, 'Canary (5% first)')
    await page.keyboard.press('ArrowDown') // moves to and selects "Blue/green switch"
    await expect(strategy.getByRole('radio', { name: 'Blue/green switch' })).toBeChecked()
    await tabTo(page, 'Region')
    await page.keyboard.press('ArrowDown')
    await page.keyboard.press('ArrowDown')
    await expect(form.getByLabel('Region')).toHaveValue('1')
    await tabTo(page, 'Day')
    await page.keyboard.type('12012026')
    await expect(form.getByLabel('Day')).toHaveValue('2026-12-01')
    await tabTo(page, 'Start time')
    await page.keyboard.type('12012026')
    await page.keyboard.press('ArrowRight') // the year segment takes up to six digits
    await page.keyboard.type('0930AM')
    await expect(form.getByLabel('Start time')).toHaveValue('2026-12-01T09:30')
    await tabTo(page, 'On-call contact')
    await page.keyboard.type('not-an-email')
    await tabTo(page, 'Notes for on-call')
    await page.keyboard.type('Page the DB team first.')
    await tabTo(page, 'Submit answers')
    await page.keyboard.press('Enter')
    // The schema's email format is checked before anything is sent.
    await expect(form.getByLabel('On-call contact')).toHaveAttribute('aria-invalid', 'true')
    expect(resumeRequests(requests)).toHaveLength(0)

    await form.getByLabel('On-call contact').focus()
    await page.keyboard.press('ControlOrMeta+A')
    await page.keyboard.type('oncall@example.com')
    await tabTo(page, 'Submit answers')
    await page.keyboard.press('Enter')
    await waitForTurnEnd(page)

    const resumes = resumeRequests(requests)
    expect(resumes).toHaveLength(1)
    expect((resumes[0]!.body as { resume: { payload: unknown }[] }).resume[0]!.payload).toEqual({
      strategy: 'blue-green',
      region: 'us-east',
      day: '2026-12-01',
      startsAt: '2026-12-01T09:30:00.000Z',
      contact: 'oncall@example.com',
      notes: 'Page the DB team first.',
    })
    await expect(page.getByRole('main', { name: 'Live chat' })).toContainText(
      'Maintenance scheduled: blue-green rollout in us-east on 2026-12-01, starting 2026-12-01T09:30:00.000Z',
    )
  })

  test('an approval shows the call’s arguments and a diff of the edit, answered by keyboard', async ({
    page,
    server,
  }) => {
    await openWorkbench(page, server)
    await startRelease(page)
    const deploy = question(page, DEPLOY)
    const args = deploy.locator('dl.interlude-call-args')
    await expect(args.locator('dt')).toHaveText(['version', 'environment'])
    await expect(args.locator('dd')).toHaveText(['v2.1', 'production'])

    await deploy.getByRole('radio', { name: 'Approve' }).focus()
    await page.keyboard.press('Space')
    await tabTo(page, 'Edit arguments')
    await page.keyboard.press('Space')
    await tabTo(page, 'Environment')
    await page.keyboard.press('ArrowUp') // production → staging
    const diff = deploy.locator('.interlude-args-diff')
    await expect(diff.locator('del')).toHaveText('production')
    await expect(diff.locator('ins')).toHaveText('staging')

    await batchForm(page).getByRole('button', { name: 'Approve all' }).click()
    await batchForm(page).getByRole('button', { name: 'Submit answers' }).press('Enter')
    await waitForTurnEnd(page)
    await expect(toolCall(page, 'deploy').locator('.tool-result')).toContainText('"environment":"staging"')
  })

  test('a schema with keywords the client does not know still renders and answers', async ({ page, server }) => {
    // A foreign AG-UI server may send vendor keywords our server would refuse: add some on the way.
    await page.route('**/api/agent/runs', async (route) => {
      const response = await route.fetch()
      const body = (await response.text()).replaceAll(
        '"x-interlude-widget":"textarea"',
        '"x-interlude-widget":"textarea","x-vendor-order":3,"$comment":"internal","deprecated":false,"x-ui":{"rows":9}',
      )
      await route.fulfill({ response, body })
    })
    const requests = trackRequests(page)
    await openWorkbench(page, server)
    await startRelease(page, SCHEDULE)
    const form = batchForm(page)
    await expect(form.getByLabel('Notes for on-call')).toHaveJSProperty('tagName', 'TEXTAREA')
    await form.getByRole('radio', { name: 'Canary (5% first)' }).check()
    await form.getByLabel('Region').selectOption({ label: 'Europe (Ireland)' })
    await form.getByLabel('Day').fill('2026-12-02')
    await form.getByLabel('Start time').fill('2026-12-02T08:00')
    await form.getByLabel('On-call contact').fill('sre@example.com')
    await form.getByRole('button', { name: 'Submit answers' }).click()
    await waitForTurnEnd(page)
    expect(resumeRequests(requests)).toHaveLength(1)
    await expect(page.getByRole('main', { name: 'Live chat' })).toContainText(
      'Maintenance scheduled: canary rollout in eu-west on 2026-12-02',
    )
  })
})
