import type { RunningServer } from '../support/server.ts'
import { expect, test as base } from '@playwright/test'
import { approvalItem, openAs, startTwoPrincipalServer, threadAs, TOKENS } from '../support/principals.ts'
import { startRelease, threadId, toolCall, waitForTurnEnd } from '../support/workbench.ts'

// A production deploy needs two approvals of approvers other than the requester (docs/approvals.md#organisation-policies,
// the demo's --production-quorum): eng asks, mgr and ops vote in the Approvals view.
const test = base.extend<{ server: RunningServer }>({
  // eslint-disable-next-line no-empty-pattern
  server: async ({}, use) => {
    const server = await startTwoPrincipalServer({
      extraArgs: ['--token', `ops=${TOKENS.ops}`, '--approver', 'ops', '--production-quorum', '2'],
    })
    try {
      await use(server)
    } finally {
      await server.stop()
    }
  },
})

// Three browser contexts and a server of their own: slower than one page on this shared 2-core machine.
test.describe.configure({ timeout: 120_000 })

test('two voters: each inbox says what is missing; the first vote waits, the second continues the turn', async ({
  browser,
  server,
}) => {
  const eng = await openAs(browser, server, 'eng')
  const mgr = await openAs(browser, server, 'mgr', 'approvals')
  await startRelease(eng.page)
  const id = await threadId(eng.page)

  // mgr's inbox row and form say the answer is a vote, and what it counts towards.
  await expect(approvalItem(mgr.page, id).getByTestId('inbox-votes')).toHaveText(' · 0 of 2 approvals')
  await approvalItem(mgr.page, id).click()
  await expect(mgr.page.getByTestId('approval-votes')).toContainText('so far 0 of 2 approvals')
  const mgrForm = mgr.page.locator('.approvals .interlude-interrupt-form')
  await mgrForm.getByRole('button', { name: 'Approve all' }).click()
  await mgrForm.getByRole('button', { name: 'Submit answers' }).click()

  // The vote settles nothing: mgr is told what is still needed, and the batch is not shown as closed.
  await expect(mgr.page.getByTestId('decision-outcome')).toContainText(
    'Your vote is recorded; still needed: 1 of 2 approvals.',
  )
  await expect(approvalItem(mgr.page, id)).toHaveCount(0)
  await expect(mgr.page.getByTestId('batch-closed')).toHaveText(
    'Waiting for the other deciders: this batch no longer needs your vote.',
  )
  await expect(mgr.page.locator('.approvals [data-testid="decision"]')).toHaveText(/^Approved \(vote\) by mgr via api/)
  // The requester sees the vote live; the deploy has not run.
  await expect(eng.page.getByTestId('decision').first()).toHaveText(/^Approved \(vote\) by mgr via api at /)
  await expect(toolCall(eng.page, 'deploy')).not.toHaveAttribute('data-state', 'done')

  // ops's inbox: one approval in, one missing.
  const ops = await openAs(browser, server, 'ops', 'approvals')
  await expect(approvalItem(ops.page, id).getByTestId('inbox-votes')).toHaveText(' · 1 of 2 approvals')
  await approvalItem(ops.page, id).click()
  const opsForm = ops.page.locator('.approvals .interlude-interrupt-form')
  await opsForm.getByRole('button', { name: 'Approve all' }).click()
  await opsForm.getByRole('button', { name: 'Submit answers' }).click()
  await expect(ops.page.getByTestId('decision-outcome')).toContainText('Sent')
  await expect(ops.page.getByTestId('batch-closed')).toContainText(
    'This batch is closed: Approved (vote) by ops via api',
  )

  // The turn continues once, on the engineer's open page.
  await expect(toolCall(eng.page, 'deploy')).toHaveAttribute('data-state', 'done')
  await waitForTurnEnd(eng.page)
  const thread = await threadAs(server, 'eng', id)
  expect(thread.state.deployments).toHaveLength(1)
  expect(thread.decisions).toEqual([
    expect.objectContaining({ decidedBy: 'mgr', via: 'api', vote: true }),
    expect.objectContaining({ decidedBy: 'ops', via: 'api', vote: true }),
  ])
  // mgr's page, which still shows the thread, now says it is closed by the deciding vote.
  await expect(mgr.page.getByTestId('batch-closed')).toContainText(
    'This batch is closed: Approved (vote) by ops via api',
  )
})
