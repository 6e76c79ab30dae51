import { afterEach, describe, expect, inject, it } from 'vitest'
import { drive, lastAssistantText, pauseOn, resumeWith, type Drive } from '../support/drive.ts'

/**
 * A Mastra agent whose `deploy` tool `suspend()`s, behind `@ag-ui/mastra`'s `MastraAgent` in both interrupt
 * configurations (docs/foreign-servers.md#mastra). `@mastra/core` needs Node ≥ 22.13, so the server runs as a child on
 * such a Node (this one, or the repository's Node 24) while the client runs here (`src/support/global-setup.ts`).
 */
const mastra = inject('mastra')
const drives: Drive[] = []
afterEach(() => {
  for (const d of drives.splice(0)) d.rt.dispose()
})

interface Deployment {
  readonly version: string
  readonly environment: string
  readonly approved: boolean
}

async function deployments(): Promise<Deployment[]> {
  return (await (await fetch(`${mastra}/deployments`)).json()) as Deployment[]
}

async function paused(config: 'legacy' | 'outcome', text: string) {
  const d = drive(`${mastra}/mastra/${config}`)
  drives.push(d)
  const pause = await pauseOn(d, text)
  expect(pause.interrupt.reason).toBe('mastra:tool_suspend')
  // The id the bridge splits again on resume: `<runId>::<toolCallId>`.
  expect(pause.interrupt.id).toBe(`${String(d.bodies[0]!.runId)}::${pause.interrupt.toolCallId}`)
  return { d, ...pause }
}

describe.each([
  ['legacy', 'emitInterruptOutcome: false'],
  ['outcome', 'default, emitInterruptOutcome: true'],
] as const)('Mastra tool suspend() through @ag-ui/mastra (%s: %s)', (config, _name) => {
  it('pauses with the suspend question as title, resumes with resume[] and the tool runs', async () => {
    const version = config === 'legacy' ? 'v2.1' : 'v2.2'
    const { d, interrupt, title, batchId } = await paused(config, `deploy ${version} to staging`)
    expect(title).toBe(`Deploy ${version} to staging?`)
    expect(interrupt.metadata?.arguments).toEqual({ version, environment: 'staging' })
    const sent = await resumeWith(d, batchId, {
      interruptId: interrupt.id,
      status: 'resolved',
      payload: { approved: true },
    })
    expect(sent).toEqual([{ interruptId: interrupt.id, status: 'resolved', payload: { approved: true } }])
    expect(await deployments()).toContainEqual({ version, environment: 'staging', approved: true })
    expect(lastAssistantText(d)).toBe(`Result: {"deployed":true,"version":"${version}","environment":"staging"}`)
  })
})

it('Mastra: a cancel is sent as { approved: false }, so the tool finishes instead of staying suspended', async () => {
  const { d, interrupt, batchId } = await paused('outcome', 'deploy v9.9 to production')
  const sent = await resumeWith(d, batchId, { interruptId: interrupt.id, status: 'cancelled' })
  expect(sent).toEqual([{ interruptId: interrupt.id, status: 'resolved', payload: { approved: false } }])
  expect(await deployments()).toContainEqual({ version: 'v9.9', environment: 'production', approved: false })
})
