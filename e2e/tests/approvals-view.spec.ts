import type { RunningServer } from '../support/server.ts'
import { expect, test as base } from '@playwright/test'
import { trackRequests } from '../support/fixtures.ts'
import { approvalItem, openAs, startTwoPrincipalServer, threadAs } from '../support/principals.ts'
import { batchForm, startRelease, threadId, toolCall, waitForTurnEnd } from '../support/workbench.ts'

// A server with two principals: eng chats, mgr approves (docs/approvals.md#who-may-decide).
const test = base.extend<{ server: RunningServer }>({
  // eslint-disable-next-line no-empty-pattern
  server: async ({}, use) => {
    const server = await startTwoPrincipalServer()
    try {
      await use(server)
    } finally {
      await server.stop()
    }
  },
})

// Two browser contexts, a server of their own and a deadline: slower than one page on this shared 2-core machine.
test.describe.configure({ timeout: 120_000 })

test('the engineer asks to deploy, the manager approves in the Approvals view, the engineer sees it live', async ({
  browser,
  server,
}) => {
  const eng = await openAs(browser, server, 'eng')
  const mgr = await openAs(browser, server, 'mgr', 'approvals')
  const mgrRequests = trackRequests(mgr.page)

  await startRelease(eng.page)
  const id = await threadId(eng.page)

  // The manager's inbox lists the engineer's batch (cross-owner), with its owner.
  await expect(approvalItem(mgr.page, id)).toBeVisible()
  await expect(approvalItem(mgr.page, id)).toContainText('eng')
  await approvalItem(mgr.page, id).click()
  await expect(mgr.page.getByTestId('approval-owner')).toHaveText('eng')
  // The same <InterruptForm> as the chat, bound to the inbox's batch.
  const form = mgr.page.locator('.approvals .interlude-interrupt-form')
  await expect(form.locator('fieldset.interlude-interrupt')).toHaveCount(2)
  await form.getByRole('button', { name: 'Approve all' }).click()
  await form.getByRole('button', { name: 'Submit answers' }).click()

  // One decision through the decisions API, with both approvals.
  await expect(mgr.page.getByTestId('decision-outcome')).toContainText('Sent')
  // Thread ids are per owner: the manager names the engineer's thread (docs/protocol.md#thread-ids).
  const decisions = mgrRequests.filter(
    (r) => r.method === 'POST' && r.url.endsWith(`/threads/${id}/decisions?owner=eng`),
  )
  expect(decisions).toHaveLength(1)
  expect((decisions[0]!.body as { resume: { status: string; payload: unknown }[] }).resume).toEqual([
    expect.objectContaining({ status: 'resolved', payload: { approved: true } }),
    expect.objectContaining({ status: 'resolved', payload: { approved: true } }),
  ])

  // The manager's view: the batch leaves the inbox, the thread shows the audit line and the continued turn.
  await expect(approvalItem(mgr.page, id)).toHaveCount(0)
  await expect(mgr.page.getByTestId('batch-closed')).toContainText('Approved by mgr via api')
  await expect(mgr.page.locator('.approvals [data-testid="decision"]')).toContainText('Approved by mgr via api at')

  // The engineer's open page (no reload): the batch retires, the continuation streams in, and it says who approved.
  await expect(eng.page.locator('section.batch')).toHaveCount(0)
  await expect(
    eng.page.getByText(/^All steps ran\. Summary: published v2\.1; deployed v2\.1 to production/),
  ).toBeVisible()
  await expect(eng.page.getByTestId('decision')).toHaveText(/^Approved by mgr via api at /)
  await expect(eng.page.getByTestId('decision')).toHaveAttribute('data-decided-by', 'mgr')
  await expect(toolCall(eng.page, 'deploy')).toHaveAttribute('data-state', 'done')
  await waitForTurnEnd(eng.page)

  const thread = await threadAs(server, 'eng', id)
  expect(thread.status).toBe('idle')
  expect(thread.state.deployments).toHaveLength(1)
  expect(thread.decisions).toEqual([expect.objectContaining({ decidedBy: 'mgr', via: 'api' })])

  // The composer works afterwards, on the same thread.
  await eng.page.locator('#composer').fill('hello')
  await eng.page.locator('#composer').press('Enter')
  await expect(eng.page.getByText(/^I can publish and deploy releases/)).toBeVisible()
  expect(await threadId(eng.page)).toBe(id)
  await eng.context.close()
  await mgr.context.close()
})

test('the engineer is not an approver: the Approvals view lists only their own batches', async ({
  browser,
  server,
}) => {
  const eng = await openAs(browser, server, 'eng')
  await startRelease(eng.page)
  const engId = await threadId(eng.page)

  // Another owner's batch (mgr chats too) is not in eng's inbox; eng's own is (an owner decides their own).
  const mgr = await openAs(browser, server, 'mgr')
  await startRelease(mgr.page)
  const mgrId = await threadId(mgr.page)

  await eng.page.getByRole('button', { name: 'Approvals' }).click()
  await expect(approvalItem(eng.page, engId)).toBeVisible()
  await expect(approvalItem(eng.page, mgrId)).toHaveCount(0)
  // Back in the chat, the batch is still answerable there.
  await eng.page.getByRole('button', { name: 'Chat' }).click()
  await expect(batchForm(eng.page)).toBeVisible()
  await eng.context.close()
  await mgr.context.close()
})

test('keep: the manager closes an expired batch in the Approvals view and the engineer’s thread continues', async ({
  browser,
}) => {
  const server = await startTwoPrincipalServer({ interruptTtl: 2, extraArgs: ['--on-expiry', 'keep'] })
  try {
    const eng = await openAs(browser, server, 'eng')
    const mgr = await openAs(browser, server, 'mgr', 'approvals')
    await startRelease(eng.page)
    const id = await threadId(eng.page)
    await expect(eng.page.getByTestId('batch-expired')).toHaveAttribute('data-policy', 'keep', { timeout: 15_000 })

    // Past its deadline the batch is still in the manager's inbox, marked expired, with its policy and a close.
    await expect(approvalItem(mgr.page, id)).toContainText('expired')
    await approvalItem(mgr.page, id).click()
    const batch = mgr.page.locator('.approvals section.batch')
    await expect(batch).toHaveAttribute('data-policy', 'keep')
    await expect(mgr.page.getByTestId('approval-deadline')).toContainText('policy keep')
    await batch.getByRole('button', { name: 'Close the batch' }).click()
    await expect(mgr.page.getByTestId('batch-closed')).toContainText('Cancelled by mgr via api')

    // The engineer's open page: the batch retires, the cancelled calls are cancelled (not denied), the same thread
    // goes on.
    await expect(eng.page.locator('section.batch')).toHaveCount(0)
    await expect(eng.page.getByTestId('decision')).toHaveText(/^Cancelled by mgr via api at /)
    await expect(toolCall(eng.page, 'deploy')).toHaveAttribute('data-state', 'cancelled')
    await waitForTurnEnd(eng.page)
    await eng.page.locator('#composer').fill('hello')
    await eng.page.locator('#composer').press('Enter')
    await expect(eng.page.getByText(/^I can publish and deploy releases/)).toBeVisible()
    expect(await threadId(eng.page)).toBe(id)
    const thread = await threadAs(server, 'eng', id)
    expect(thread.state.deployments ?? []).toHaveLength(0)
    await eng.context.close()
    await mgr.context.close()
  } finally {
    await server.stop()
  }
})
