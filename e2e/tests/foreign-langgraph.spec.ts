import { expect, test } from '@playwright/test'
import type { ChildServer, LangGraphUrls } from '@interlude/interop/servers'
import { startForeignLangGraph } from '../support/foreign-langgraph.ts'

/**
 * `useChat` and `<InterruptForm>` in Chromium against a real foreign server: LangGraph.js's API server running a node
 * that calls `interrupt()`, behind `@ag-ui/langgraph` in its default (legacy `on_interrupt`) configuration
 * (docs/foreign-servers.md#langgraph).
 */
let server: ChildServer<LangGraphUrls>
test.beforeAll(async () => {
  server = await startForeignLangGraph()
})
test.afterAll(async () => {
  await server.stop()
})

test('LangGraph interrupt(): the pause shows its question, approve, the graph finishes', async ({ page }) => {
  const errors: string[] = []
  page.on('pageerror', (error) => errors.push(error.message))
  await page.goto(`${server.urls.agui}/?run=/approval/legacy`)
  const input = page.getByRole('textbox', { name: 'Message' })
  await input.fill('deploy v2.1 to staging')
  await input.press('Enter')

  const form = page.locator('.interlude-interrupt-form')
  await expect(page.getByTestId('status')).toHaveText('paused')
  // The question from the node's interrupt() value, not the raw reason `langgraph:interrupt`.
  await expect(form).toContainText('Deploy v2.1 to staging?')
  await expect(form).not.toContainText('langgraph:interrupt')

  await form.getByRole('button', { name: 'Approve all' }).click()
  await form.getByRole('button', { name: 'Submit answers' }).click()
  await expect(page.getByRole('list', { name: 'Messages' })).toContainText('Deployed v2.1 to staging.')
  await expect(form).toHaveCount(0)
  await expect(page.getByTestId('status')).toHaveText('idle')
  expect(errors).toEqual([])
})
