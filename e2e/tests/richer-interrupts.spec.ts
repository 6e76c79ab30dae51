import { expect, resumeRequests, test, trackRequests } from '../support/fixtures.ts'
import {
  batchForm,
  checkState,
  openWorkbench,
  question,
  serverThread,
  startRelease,
  submitButton,
  toolCall,
  waitForTurnEnd,
} from '../support/workbench.ts'

/**
 * The demo's richer interrupts end to end (docs/demo-agent.md, docs/approvals.md#asking-from-inside-a-tool and
 * #subagents): the server raises them, the workbench presents them, one resume answers them.
 */

interface RichState {
  readonly rollbacks?: readonly { readonly version: string; readonly deployments: readonly string[] }[]
  readonly audits?: readonly { readonly version: string }[]
}

test.describe('asking from inside a tool and from a subagent', () => {
  test('"audit": the auditor subagent asks in its own group, answered by keyboard; its activity is attributed', async ({
    page,
    server,
  }) => {
    const requests = trackRequests(page)
    await openWorkbench(page, server)
    await startRelease(page, 'audit v2.1')

    // The sign_off approval is shown in a section of its own, labelled by the subagent's name.
    const group = batchForm(page).locator('section.interlude-subagent-group')
    await expect(group).toHaveCount(1)
    await expect(group.getByRole('heading', { level: 3 })).toHaveText('auditor')
    const runId = await group.getAttribute('data-subagent-run-id')
    expect(runId).toMatch(/^subrun_/)
    const signOff = question(page, /^Sign off the audit of v2\.1\?/)
    await expect(group.locator('fieldset.interlude-interrupt')).toHaveCount(1)
    await expect(signOff).toHaveCount(1)

    // While it waits, the parent's auditor call is awaiting and the subagent's activity is shown, collapsed.
    await expect(toolCall(page, 'auditor')).toHaveAttribute('data-state', 'awaiting')
    const activity = page.locator(`details.subagent-activity[data-subagent-run-id="${runId}"]`)
    await expect(activity).toHaveAttribute('data-status', 'interrupted')
    await expect(activity).not.toHaveAttribute('open', '')

    // Answer by keyboard only: focus the approve choice, select it, submit with Enter.
    await signOff.getByRole('radio', { name: 'Approve' }).focus()
    await page.keyboard.press('Space')
    await expect(signOff.getByRole('radio', { name: 'Approve' })).toBeChecked()
    await submitButton(page).focus()
    await page.keyboard.press('Enter')
    await waitForTurnEnd(page)

    // One resume carried the subagent's entry; the server routed it to the auditor, whose sign_off ran once.
    const resumes = resumeRequests(requests)
    expect(resumes).toHaveLength(1)
    expect((resumes[0]!.body as { resume: unknown[] }).resume).toEqual([
      expect.objectContaining({ status: 'resolved', payload: expect.objectContaining({ approved: true }) }),
    ])
    await expect(toolCall(page, 'auditor')).toHaveAttribute('data-state', 'done')
    await expect(activity).toHaveAttribute('data-status', 'finished')
    await activity.locator('summary').click()
    await expect(activity.locator('.subagent-text')).toContainText('auditor: Auditing v2.1')
    await expect(activity.getByRole('list', { name: "auditor's tool calls" })).toContainText('sign_off')
    const thread = await serverThread(page, server)
    // The subagent's own messages stay out of the parent's history (the parent has the auditor's result only).
    const history = JSON.stringify((thread as { messages?: unknown }).messages)
    expect(history).toContain('signed off')
    expect(history).not.toContain('Auditing v2.1')
    expect(thread.status).toBe('idle')
    expect((thread.state as RichState).audits).toEqual([expect.objectContaining({ version: 'v2.1' })])
  })

  test('"rollback": the tool asks from inside its execute, lists the deployments, and rolls back once confirmed', async ({
    page,
    server,
  }) => {
    await openWorkbench(page, server)
    // A deployment to roll back first.
    await startRelease(page, 'deploy v2.1 to staging')
    await batchForm(page).getByRole('button', { name: 'Approve all' }).click()
    await submitButton(page).click()
    await waitForTurnEnd(page)

    await startRelease(page, 'rollback v2.1')
    const confirm = question(page, /^Roll back v2\.1\? Affected deployments: staging/)
    await expect(confirm).toHaveCount(1)
    // A confirmation, not a tool approval: no Approve/Deny, a yes/no that starts unanswered.
    await expect(confirm.getByRole('radio', { name: 'Approve' })).toHaveCount(0)
    const answer = confirm.getByLabel('Roll back these deployments')
    await expect(answer).toHaveValue('')
    await answer.selectOption({ label: 'Yes' })
    await submitButton(page).click()
    await waitForTurnEnd(page)

    await expect(toolCall(page, 'rollback')).toHaveAttribute('data-state', 'done')
    await checkState(page, server, (state) => {
      const rollbacks = (state as RichState).rollbacks
      expect(rollbacks).toHaveLength(1)
      expect(rollbacks?.[0]).toMatchObject({ version: 'v2.1' })
      expect(rollbacks?.[0]?.deployments).toHaveLength(1)
    })
  })
})
