import { existsSync, mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect, test } from '../support/fixtures.ts'
import { E2E_DIR } from '../support/paths.ts'
import { startServer } from '../support/server.ts'
import { openWorkbench, threadId } from '../support/workbench.ts'

// A tool killed mid-effect (support/agents/stuck-tool.mjs): after the restart its outcome is unknown, the workbench
// shows it as unknown (never failed, never re-run) and a person records what happened (docs/client-contract.md).
const AGENT = join(E2E_DIR, 'support/agents/stuck-tool.mjs')

test.describe.configure({ timeout: 120_000 })

test('an effect killed mid-run is shown as unknown and reconciled by hand in the chat, never re-run', async ({
  page,
}) => {
  const markers = mkdtempSync(join(tmpdir(), 'interlude-e2e-markers-'))
  process.env.INTERLUDE_E2E_MARKERS = markers
  const first = await startServer({ agentModule: AGENT })
  let second: Awaited<ReturnType<typeof startServer>> | undefined
  try {
    await openWorkbench(page, first)
    await page.locator('#composer').fill('sync the inventory')
    await page.locator('#composer').press('Enter')
    const thread = await threadId(page)
    const marker = join(markers, `started-${thread}`)
    await expect.poll(() => existsSync(marker), { timeout: 20_000 }).toBe(true)

    await first.kill() // SIGKILL while the tool runs: its effect started and never settled
    second = await startServer({ dbPath: first.dbPath, port: first.port, agentModule: AGENT })
    await page.reload()
    const unknown = page.getByRole('region', { name: 'Effects with an unknown outcome' })
    await expect(unknown.getByTestId('unknown-effect')).toHaveCount(1, { timeout: 20_000 })
    await expect(unknown).toContainText('sync_inventory')
    await expect(unknown).toContainText('outcome unknown')

    await unknown.getByRole('button', { name: 'It happened' }).click()
    await expect(unknown).toHaveCount(0)
    const snapshot = await (await page.request.get(`${second.url}/api/agent/threads/${thread}`)).json()
    expect(snapshot.unsettledEffects).toBeUndefined()
    // Started once, never again: one line in the marker, written by the first process.
    expect(readFileSync(marker, 'utf8').trim().split('\n')).toHaveLength(1)
  } finally {
    await second?.stop()
    await first.stop().catch(() => undefined)
    delete process.env.INTERLUDE_E2E_MARKERS
  }
})
