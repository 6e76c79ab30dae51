import { expect, test } from '@playwright/test'
import { trackRequests } from '../support/fixtures.ts'
import type { RunningServer } from '../support/server.ts'
import { startServer } from '../support/server.ts'
import { openWorkbench, serverThread, startRelease, threadId, toolCall, waitForTurnEnd } from '../support/workbench.ts'

// docs/approvals.md#deadlines, in the workbench: a deadline never strands a thread. Each test starts its own server
// with a 2-second interrupt TTL and the policy under test.
async function withServer(args: readonly string[], body: (server: RunningServer) => Promise<void>): Promise<void> {
  const server = await startServer({ interruptTtl: 2, extraArgs: args })
  try {
    await body(server)
  } finally {
    await server.stop()
  }
}

test('deny: the open page shows the system decision, the model is told, and the composer works afterwards', async ({
  page,
}) => {
  await withServer([], async (server) => {
    await openWorkbench(page, server)
    await startRelease(page)
    const id = await threadId(page)
    // The batch carries its policy (metadata.onExpiry); the expired notice itself may last only until the server's
    // decision arrives, so it is not waited for.
    await expect(page.locator('section.batch')).toHaveAttribute('data-policy', 'deny')

    // No reload: the deadline's decision and the continued turn reach the page.
    await expect(page.getByTestId('decision')).toHaveText(/^Denied by the deadline via expiry at /, { timeout: 15_000 })
    await expect(page.getByTestId('decision')).toHaveAttribute('data-decided-by', 'system:expiry')
    await expect(page.getByText(/^Nothing ran\. Summary: .*was denied \(expired\)/)).toBeVisible()
    await expect(toolCall(page, 'deploy')).toHaveAttribute('data-state', 'denied')
    await waitForTurnEnd(page)

    await page.locator('#composer').fill('hello')
    await page.locator('#composer').press('Enter')
    await expect(page.getByText(/^I can publish and deploy releases/)).toBeVisible()
    expect(await threadId(page)).toBe(id)
    expect((await serverThread(page, server)).status).toBe('idle')
  })
})

test('keep: the expired batch stays, "Close the batch" cancels it and the same thread continues', async ({ page }) => {
  await withServer(['--on-expiry', 'keep'], async (server) => {
    const requests = trackRequests(page)
    await openWorkbench(page, server)
    await startRelease(page)
    const id = await threadId(page)
    const expired = page.getByTestId('batch-expired')
    await expect(expired).toHaveAttribute('data-policy', 'keep', { timeout: 15_000 })
    await expect(expired).toContainText('stays open until it is closed')
    // The form itself is closed to answers; the close is the one action left.
    await expect(
      page.locator('.interlude-interrupt-form').getByRole('button', { name: 'Submit answers' }),
    ).toBeDisabled()
    // Still open on the server past its deadline (keep), and new input is refused until it is closed.
    expect((await serverThread(page, server)).interrupts).toHaveLength(2)

    await expired.getByRole('button', { name: 'Close the batch' }).click()

    // Every answer cancelled (no payload): shown as cancelled, not as denied; nothing ran.
    await expect(page.getByTestId('decision')).toHaveText(/^Cancelled by .+ via (api|run) at /)
    await expect(toolCall(page, 'deploy')).toHaveAttribute('data-state', 'cancelled')
    await expect(toolCall(page, 'publish_release')).toHaveAttribute('data-state', 'cancelled')
    await waitForTurnEnd(page)
    // One close request, by whichever channel (the decisions API, or a resume run), all cancelled.
    const closes = requests.filter(
      (r) => r.method === 'POST' && Array.isArray((r.body as { resume?: unknown } | null)?.resume),
    )
    expect(closes).toHaveLength(1)
    expect((closes[0]!.body as { resume: unknown[] }).resume).toEqual([
      { interruptId: expect.any(String), status: 'cancelled' },
      { interruptId: expect.any(String), status: 'cancelled' },
    ])

    // The same thread goes on.
    await page.locator('#composer').fill('hello')
    await page.locator('#composer').press('Enter')
    await expect(page.getByText(/^I can publish and deploy releases/)).toBeVisible()
    expect(await threadId(page)).toBe(id)
    const thread = await serverThread(page, server)
    expect(thread.status).toBe('idle')
    expect(thread.state.deployments ?? []).toHaveLength(0)
  })
})
