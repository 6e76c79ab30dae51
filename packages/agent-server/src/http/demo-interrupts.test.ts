import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Interrupt } from '@interlude/protocol'
import type { ReleaseState } from '../demo/release-assistant.ts'
import { ROLLBACK_CONFIRM_SCHEMA } from '../demo/rollback.ts'
import { interruptsOf, newThreadId, resumeInput, runInput, textOf, userMessage } from '../test-utils/harness.ts'
import type { InProcessServer } from '../test-utils/in-process.ts'
import { startInProcess } from '../test-utils/in-process.ts'
import { resolved } from '../test-utils/resume-entries.ts'

/** The demo agent's issue-15 flows (docs/demo-agent.md), offline with the scripted model. */
describe('demo agent: rollback asks from inside its execute', () => {
  let server: InProcessServer
  beforeAll(async () => {
    server = await startInProcess()
  })
  afterAll(async () => {
    await server.dispose()
  })

  async function deployed(threadId: string): Promise<string> {
    const paused = await server.postRun(runInput(threadId, [userMessage('deploy v2.4 to production')]))
    const interrupts = interruptsOf(paused.events)
    const done = await server.postRun(
      resumeInput(
        threadId,
        interrupts.map((i) => resolved(i)),
      ),
    )
    expect(done.status).toBe(200)
    return interrupts.find((i) => (i.metadata as { toolName: string }).toolName === 'deploy')!.toolCallId!
  }

  async function askRollback(threadId: string): Promise<Interrupt> {
    const run = await server.postRun(runInput(threadId, [userMessage('rollback v2.4')]))
    expect(run.status).toBe(200)
    const interrupts = interruptsOf(run.events)
    expect(interrupts).toHaveLength(1)
    return interrupts[0]!
  }

  it('"rollback vX" asks a confirmation listing the affected deployments; confirmed, it appends to state.rollbacks', async () => {
    const threadId = newThreadId()
    const operation = await deployed(threadId)
    const asked = await askRollback(threadId)
    expect(asked).toMatchObject({
      reason: 'confirmation',
      message: `Roll back v2.4? Affected deployments: production (operation ${operation}).`,
      responseSchema: ROLLBACK_CONFIRM_SCHEMA,
      metadata: { toolName: 'rollback', version: 'v2.4', affected: [operation] },
    })
    const done = await server.postRun(resumeInput(threadId, [resolved(asked, { confirm: true })]))
    expect(done.status).toBe(200)
    expect(textOf(done.events)).toContain('rolled back v2.4 (1 deployment)')
    const state = (await server.store.getThread(threadId))?.state as ReleaseState
    expect(state.rollbacks).toEqual([{ version: 'v2.4', toolCallId: asked.toolCallId, deployments: [operation] }])
  })

  it('not confirmed: nothing changes, the model says so', async () => {
    const threadId = newThreadId()
    await deployed(threadId)
    const asked = await askRollback(threadId)
    const done = await server.postRun(resumeInput(threadId, [resolved(asked, { confirm: false })]))
    expect(textOf(done.events)).toContain('rollback of v2.4 was not confirmed; nothing changed')
    const state = (await server.store.getThread(threadId))?.state as ReleaseState
    expect(state.rollbacks).toBeUndefined()
  })
})
