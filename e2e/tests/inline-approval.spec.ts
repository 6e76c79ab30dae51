import { audit, blocking } from '../support/axe.ts'
import { expect, resumeRequests, test, trackRequests } from '../support/fixtures.ts'
import {
  DEPLOY,
  PUBLISH,
  batchForm,
  checkState,
  openWorkbench,
  question,
  startRelease,
  toolCall,
  waitForTurnEnd,
} from '../support/workbench.ts'

// A custom renderer shown inline at its tool call (docs/client-contract.md#custom-renderers): the workbench's deploy
// card answers into the batch form's drafts, and the batch is still sent once.
test('the deploy card at its tool call: edit, approve inline, one resume for the whole batch', async ({
  page,
  server,
}, testInfo) => {
  const requests = trackRequests(page)
  await openWorkbench(page, server)
  await page.getByLabel('Answer deploys with a card at the tool call').check()
  await startRelease(page)

  const inline = toolCall(page, 'deploy').getByRole('group', { name: DEPLOY })
  const card = inline.getByTestId('deploy-card')
  await expect(card).toContainText('Deploy v2.1 to production')
  // The batch form accounts for the deploy question without asking it a second time.
  const summary = question(page, DEPLOY)
  await expect(summary).toContainText('Answer it at its tool call in the conversation.')
  await expect(summary.getByRole('radio')).toHaveCount(0)
  expect(blocking(await audit(page, testInfo, 'inline-deploy-card'))).toEqual([])

  await card.getByRole('button', { name: 'Switch to staging' }).click()
  await expect(card).toContainText('Deploy v2.1 to staging (the assistant asked for production)')
  // Approving while the publish question is unanswered sends nothing and says what is missing.
  await card.getByRole('button', { name: 'Deploy and continue' }).click()
  await expect(summary).toContainText('Approved at its tool call.')
  await expect(question(page, PUBLISH)).toContainText('An answer is required.')
  await expect(batchForm(page).getByRole('alert')).toHaveText('Some answers are missing or invalid.')
  expect(resumeRequests(requests)).toHaveLength(0)

  await question(page, PUBLISH).getByLabel('Approve').check()
  await card.getByRole('button', { name: 'Deploy and continue' }).click()
  await waitForTurnEnd(page)

  await expect(toolCall(page, 'publish_release')).toHaveAttribute('data-state', 'done')
  await expect(toolCall(page, 'deploy')).toHaveAttribute('data-state', 'done')
  await expect(toolCall(page, 'deploy').locator('.tool-result')).toContainText('"environment":"staging"')
  await checkState(page, server, (state) => {
    expect(state.deployments).toEqual([expect.objectContaining({ version: 'v2.1', environment: 'staging' })])
  })
  const resumes = resumeRequests(requests)
  expect(resumes).toHaveLength(1)
  expect((resumes[0]!.body as { resume: unknown[] }).resume).toEqual([
    expect.objectContaining({ status: 'resolved', payload: { approved: true } }),
    expect.objectContaining({
      status: 'resolved',
      payload: { approved: true, editedArgs: { version: 'v2.1', environment: 'staging' } },
    }),
  ])
})
