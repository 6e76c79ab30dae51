import { expect, test } from '@playwright/test'

/**
 * The Next.js app of the consumer test (scripts/consumer-nextjs.sh): `next build` + `next start` of an app-router app
 * with `useChat` in a client component and the agent server inside a route handler. Runs only as the `nextjs` project,
 * which exists when NEXT_APP_URL names the started app.
 */
const url = process.env.NEXT_APP_URL ?? ''

test('Next.js: pause, reload while paused, approve, and the same turn finishes', async ({ page }) => {
  const errors: string[] = []
  page.on('pageerror', (error) => errors.push(error.message))
  await page.goto(url)
  const input = page.getByRole('textbox', { name: 'Message' })
  await expect(input).toBeVisible()
  await input.fill('deploy v2.1 to staging')
  await input.press('Enter')

  const form = page.locator('.interlude-interrupt-form')
  await expect(form).toBeVisible()
  await expect(page.getByTestId('status')).toHaveText('paused')

  // The reload recipe: the stored thread id comes back after mount and recover() restores the batch.
  await page.reload()
  await expect(form).toBeVisible()
  await expect(page.getByTestId('status')).toHaveText('paused')

  await form.getByRole('button', { name: 'Approve all' }).click()
  await form.getByRole('button', { name: 'Submit answers' }).click()
  await expect(page.getByRole('list', { name: 'Messages' })).toContainText('deployed v2.1 to staging')
  await expect(form).toHaveCount(0)
  await expect(page.getByTestId('status')).toHaveText('idle')
  // No hydration mismatch or other page error.
  expect(errors).toEqual([])
})
