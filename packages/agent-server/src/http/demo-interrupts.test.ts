import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Interrupt } from '@interlude/protocol'
import type { ReleaseState } from '../demo/release-assistant.ts'
import { ROLLBACK_CONFIRM_SCHEMA } from '../demo/rollback.ts'
import { EventType, SUBAGENT_EVENT_NAME } from '@interlude/protocol'
import { interruptsOf, newThreadId, resumeInput, runInput, textOf, userMessage } from '../test-utils/harness.ts'
import type { InProcessServer } from '../test-utils/in-process.ts'
import { startInProcess } from '../test-utils/in-process.ts'
import { resolved } from '../test-utils/resume-entries.ts'
import { threadKey } from '../store/thread-key.ts'

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
    const state = (await server.store.getThread(threadKey('alice', threadId)))?.state as ReleaseState
    expect(state.rollbacks).toEqual([{ version: 'v2.4', toolCallId: asked.toolCallId, deployments: [operation] }])
  })

  it('not confirmed: nothing changes, the model says so', async () => {
    const threadId = newThreadId()
    await deployed(threadId)
    const asked = await askRollback(threadId)
    const done = await server.postRun(resumeInput(threadId, [resolved(asked, { confirm: false })]))
    expect(textOf(done.events)).toContain('rollback of v2.4 was not confirmed; nothing changed')
    const state = (await server.store.getThread(threadKey('alice', threadId)))?.state as ReleaseState
    expect(state.rollbacks).toBeUndefined()
  })
})

describe('demo agent: "audit" runs the auditor subagent, whose sign_off needs approval', () => {
  let server: InProcessServer
  beforeAll(async () => {
    server = await startInProcess()
  })
  afterAll(async () => {
    await server.dispose()
  })

  it('pauses on sign_off with the subagent run id; approved, the auditor reports and the sign-off is recorded', async () => {
    const threadId = newThreadId()
    const run = await server.postRun(runInput(threadId, [userMessage('audit v3.1')]))
    expect(textOf(run.events)).toContain('I will ask the auditor to audit v3.1')
    const [asked] = interruptsOf(run.events)
    const parentCall = (asked!.metadata as { subagent: { toolCallId: string } }).subagent.toolCallId
    expect(asked).toMatchObject({
      reason: 'tool_call',
      message: 'Sign off the audit of v3.1?',
      subagentRunId: `subrun_${parentCall}`,
      metadata: { toolName: 'sign_off', subagent: { name: 'auditor', toolCallId: parentCall } },
    })
    const custom = run.events.filter(
      (e) => e.type === EventType.CUSTOM && (e as { name: string }).name === SUBAGENT_EVENT_NAME,
    )
    expect(custom.length).toBeGreaterThan(0)

    const done = await server.postRun(resumeInput(threadId, [resolved(asked!)]))
    expect(done.status).toBe(200)
    expect(textOf(done.events)).toContain('the auditor reported: Audit of v3.1 passed and is signed off.')
    const state = (await server.store.getThread(threadKey('alice', threadId)))?.state as ReleaseState
    expect(state.audits).toEqual([
      { version: 'v3.1', toolCallId: `${asked!.subagentRunId}:${asked!.toolCallId}`, signedOffFor: 'alice' },
    ])
  })
})
