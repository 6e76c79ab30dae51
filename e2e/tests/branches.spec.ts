import type { Page } from '@playwright/test'
import { audit, blocking } from '../support/axe.ts'
import { expect, test, trackRequests } from '../support/fixtures.ts'
import type { RunningServer } from '../support/server.ts'
import { openWorkbench, threadId, waitForTurnEnd } from '../support/workbench.ts'

/**
 * Versions of a conversation in the live chat (docs/react-runtime.md#branches, `useChat().editMessage`, `regenerate`,
 * `branches`, `switchBranch`): an answer regenerated and a message edited each become a fork of their own, the
 * "‹ n / m ›" switcher goes back and forth, every branch shows exactly its own messages after every switch (the
 * parent's never on a fork, a fork's never on the parent), a reload stays on the fork, and the parent is never written.
 */

const DEFAULT_ANSWER =
  'I can publish and deploy releases. Try "deploy v2.1 to production", or ask me to choose an environment.'
const EDITED = 'please ask me which environment'
const ASKED = 'Let me ask which environment you want.'

const texts = (page: Page) => page.locator('ol.messages > li[data-role] .message-text')
const position = (page: Page) => page.getByTestId('branch-position')
const question = (page: Page) => page.locator('ol.messages > li[data-role="user"]').first()

/** The page shows this thread with exactly these messages (user and assistant texts, in order) and nothing else. */
async function shows(page: Page, id: string, messages: readonly string[], at: string): Promise<void> {
  await expect(page.getByTestId('thread-id')).toHaveText(id)
  await expect(page).toHaveURL(new RegExp(`[?&]thread=${id}`))
  await expect(texts(page)).toHaveText([...messages])
  await expect(position(page)).toHaveText(at)
}

async function storedThread(page: Page, server: RunningServer, id: string) {
  const response = await page.request.get(`${server.url}/api/agent/threads/${id}`)
  expect(response.status()).toBe(200)
  return (await response.json()) as { revision: number; messages: unknown[]; lastEventId: number; parent?: unknown }
}

test.describe('versions of a conversation', () => {
  test('regenerate and edit fork; switching shows each branch exactly; a reload stays on the fork', async ({
    page,
    server,
  }) => {
    await openWorkbench(page, server)
    await page.locator('#composer').fill('hello')
    await page.locator('#composer').press('Enter')
    await expect(texts(page)).toHaveText(['hello', DEFAULT_ANSWER])
    await waitForTurnEnd(page)
    const parentId = await threadId(page)
    const parentBefore = await storedThread(page, server, parentId)
    const requests = trackRequests(page)

    // Regenerate the answer: a fork at "hello", answered again there.
    await page.locator('ol.messages > li[data-role="assistant"]').getByRole('button', { name: 'Regenerate' }).click()
    await expect(page.getByTestId('thread-id')).not.toHaveText(parentId)
    await waitForTurnEnd(page)
    const regenId = await threadId(page)
    await shows(page, regenId, ['hello', DEFAULT_ANSWER], '2 / 2')

    // Back to the original.
    await question(page).getByRole('button', { name: 'Previous version' }).click()
    await shows(page, parentId, ['hello', DEFAULT_ANSWER], '1 / 2')

    // Edit the question: a third version, which pauses with a question of its own.
    await question(page).getByRole('button', { name: 'Edit' }).click()
    const form = page.getByRole('form', { name: 'Edit message' })
    await form.getByRole('textbox', { name: 'New text of the message' }).fill(EDITED)
    await form.getByRole('button', { name: 'Send edited message' }).click()
    await expect(page.locator('section.batch')).toBeVisible()
    const editId = await threadId(page)
    expect([parentId, regenId]).not.toContain(editId)
    await shows(page, editId, [EDITED, ASKED], '3 / 3')
    expect(blocking(await audit(page, test.info(), 'message-versions'))).toEqual([])

    // Back and forth while the edited version's question waits: it is that thread's, and comes back with it.
    await question(page).getByRole('button', { name: 'Previous version' }).click()
    await shows(page, regenId, ['hello', DEFAULT_ANSWER], '2 / 3')
    await expect(page.locator('section.batch')).toHaveCount(0)
    await question(page).getByRole('button', { name: 'Previous version' }).click()
    await shows(page, parentId, ['hello', DEFAULT_ANSWER], '1 / 3')
    await expect(page.locator('section.batch')).toHaveCount(0)
    await question(page).getByRole('button', { name: 'Next version' }).click()
    await shows(page, regenId, ['hello', DEFAULT_ANSWER], '2 / 3')
    await question(page).getByRole('button', { name: 'Next version' }).click()
    await shows(page, editId, [EDITED, ASKED], '3 / 3')
    await expect(page.locator('section.batch')).toBeVisible()

    // A reload stays on the edited version: its messages, its question and the switcher come back.
    await page.reload()
    await shows(page, editId, [EDITED, ASKED], '3 / 3')
    await expect(page.locator('section.batch')).toBeVisible()
    await question(page).getByRole('button', { name: 'Previous version' }).click()
    await shows(page, regenId, ['hello', DEFAULT_ANSWER], '2 / 3')
    await question(page).getByRole('button', { name: 'Previous version' }).click()
    await shows(page, parentId, ['hello', DEFAULT_ANSWER], '1 / 3')

    // The parent was never written: no run and no message was posted to it, and its stored thread is unchanged.
    const posted = requests.filter((r) => r.method === 'POST' && r.url.endsWith('/api/agent/runs'))
    expect(posted.map((r) => (r.body as { threadId: string }).threadId)).toEqual([regenId, editId])
    expect(await storedThread(page, server, parentId)).toEqual(parentBefore)
    expect((await storedThread(page, server, editId)).parent).toEqual({
      threadId: parentId,
      at: { messageId: expect.any(String) },
    })
    await expect(page.getByTestId('local-error')).toHaveCount(0)
    await expect(page.getByTestId('chat-error')).toHaveCount(0)
  })
})
