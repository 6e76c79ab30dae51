import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { EventType } from '@interlude/protocol'
import type { Interrupt, ResumeEntry } from '@interlude/protocol'
import type { ReleaseState } from '../demo/release-assistant.ts'
import {
  interruptsOf,
  lastState,
  newThreadId,
  parsedState,
  resumeInput,
  runInput,
  textOf,
  threadRow,
  toolResults,
  types,
  userMessage,
} from '../test-utils/harness.ts'
import type { InProcessServer } from '../test-utils/in-process.ts'
import { startInProcess } from '../test-utils/in-process.ts'

let server: InProcessServer
beforeAll(async () => {
  server = await startInProcess()
})
afterAll(async () => {
  await server.dispose()
})

/** Starts a release turn and returns the two interrupts (publish_release, deploy). */
async function pause(text = 'please deploy v2.1 to production') {
  const threadId = newThreadId()
  const first = await server.postRun(runInput(threadId, [userMessage(text)]))
  expect(first.status).toBe(200)
  const interrupts = interruptsOf(first.events)
  expect(interrupts).toHaveLength(2)
  const publish = interrupts.find((i) => (i.metadata as { toolName: string }).toolName === 'publish_release')!
  const deploy = interrupts.find((i) => (i.metadata as { toolName: string }).toolName === 'deploy')!
  return { threadId, first, publish, deploy }
}

const approve = (i: Interrupt, extra: Record<string, unknown> = {}): ResumeEntry => ({
  interruptId: i.id,
  status: 'resolved',
  payload: { approved: true, ...extra },
})

describe('release assistant: one batch of two tool_call interrupts', () => {
  it('pauses with STATE_SNAPSHOT, MESSAGES_SNAPSHOT and RUN_FINISHED(interrupt), stored before the frame', async () => {
    const { threadId, first, publish, deploy } = await pause()
    const t = types(first.events)
    expect(t[0]).toBe(EventType.RUN_STARTED)
    expect(t.slice(-3)).toEqual([EventType.STATE_SNAPSHOT, EventType.MESSAGES_SNAPSHOT, EventType.RUN_FINISHED])
    expect(t.filter((x) => x === EventType.TOOL_CALL_START)).toHaveLength(2)
    expect(t).toContain(EventType.TEXT_MESSAGE_CONTENT)
    // ids are strictly increasing per-thread sequence numbers
    const ids = first.ids.map(Number)
    expect(ids).toEqual([...ids].sort((a, b) => a - b))
    expect(new Set(ids).size).toBe(ids.length)
    for (const i of [publish, deploy]) {
      expect(i.id).toMatch(/^int_[0-9a-f-]{36}$/)
      expect(i.reason).toBe('tool_call')
      expect(typeof i.toolCallId).toBe('string')
      expect(i.message).toMatch(/v2\.1/)
      expect(i.expiresAt).toMatch(/Z$/)
      expect(Date.parse(i.expiresAt!)).toBeGreaterThan(Date.now() + 59 * 60_000)
    }
    expect(deploy.message).toBe('Deploy v2.1 to production?')
    expect((deploy.responseSchema as { properties: Record<string, unknown> }).properties).toHaveProperty('editedArgs')
    expect((publish.responseSchema as { properties: Record<string, unknown> }).properties).not.toHaveProperty(
      'editedArgs',
    )
    expect(publish.responseSchema).toMatchObject({ required: ['approved'], additionalProperties: false })
    expect(threadRow(server.dbPath, threadId)).toMatchObject({ status: 'interrupted', active_run_id: null })
    const snapshot = first.events.find((e) => e.type === EventType.MESSAGES_SNAPSHOT) as {
      messages: { role: string }[]
    }
    expect(snapshot.messages.map((m) => m.role)).toEqual(['user', 'assistant'])
  })

  it('approve both: both run, state records them, summary names both', async () => {
    const { threadId, publish, deploy } = await pause()
    const resumed = await server.postRun(resumeInput(threadId, [approve(publish), approve(deploy)]))
    expect(resumed.status).toBe(200)
    const t = types(resumed.events)
    expect(t[0]).toBe(EventType.RUN_STARTED)
    expect(t[t.length - 1]).toBe(EventType.RUN_FINISHED)
    // The resumed run answers the original calls and never re-emits them.
    expect(t).not.toContain(EventType.TOOL_CALL_START)
    const results = toolResults(resumed.events)
    expect(results.map((r) => r.toolCallId)).toEqual([publish.toolCallId, deploy.toolCallId])
    const state = lastState(resumed.events) as ReleaseState
    expect(state.releases).toEqual([{ version: 'v2.1', toolCallId: publish.toolCallId }])
    expect(state.deployments).toEqual([{ operationId: deploy.toolCallId, version: 'v2.1', environment: 'production' }])
    expect(parsedState(server.dbPath, threadId)).toEqual(state)
    expect(textOf(resumed.events)).toBe(
      `All steps ran. Summary: published v2.1; deployed v2.1 to production (operation ${deploy.toolCallId}).`,
    )
    expect(threadRow(server.dbPath, threadId)).toMatchObject({ status: 'idle', active_run_id: null })
  })

  it('deny one: the denied call gets a denied result the model reads; the other runs', async () => {
    const { threadId, publish, deploy } = await pause()
    const resumed = await server.postRun(
      resumeInput(threadId, [
        approve(publish),
        { interruptId: deploy.id, status: 'resolved', payload: { approved: false, reason: 'freeze week' } },
      ]),
    )
    const results = toolResults(resumed.events)
    expect(results[1]).toEqual({ toolCallId: deploy.toolCallId, content: { status: 'denied', reason: 'freeze week' } })
    const state = lastState(resumed.events) as ReleaseState
    expect(state.releases).toHaveLength(1)
    expect(state.deployments).toEqual([])
    expect(textOf(resumed.events)).toBe(
      'Some steps ran. Summary: published v2.1; deploy v2.1 to production was denied (freeze week).',
    )
  })

  it("edit deploy's args: editedArgs replace the arguments", async () => {
    const { threadId, publish, deploy } = await pause()
    const resumed = await server.postRun(
      resumeInput(threadId, [
        approve(publish),
        approve(deploy, { editedArgs: { version: 'v2.1.1', environment: 'staging' } }),
      ]),
    )
    expect(resumed.status).toBe(200)
    const state = lastState(resumed.events) as ReleaseState
    expect(state.deployments).toEqual([{ operationId: deploy.toolCallId, version: 'v2.1.1', environment: 'staging' }])
    expect(textOf(resumed.events)).toContain(`deployed v2.1.1 to staging (operation ${deploy.toolCallId})`)
  })

  it('cancel all: cancelled results, no model call, no text, state unchanged', async () => {
    const { threadId, publish, deploy } = await pause()
    const resumed = await server.postRun(
      resumeInput(threadId, [
        { interruptId: publish.id, status: 'cancelled' },
        { interruptId: deploy.id, status: 'cancelled' },
      ]),
    )
    // The decision record follows RUN_STARTED (docs/approvals.md#decision-records).
    expect(types(resumed.events)).toEqual([
      EventType.RUN_STARTED,
      EventType.CUSTOM,
      EventType.TOOL_CALL_RESULT,
      EventType.TOOL_CALL_RESULT,
      EventType.RUN_FINISHED,
    ])
    expect(toolResults(resumed.events).map((r) => (r.content as { status: string }).status)).toEqual([
      'cancelled',
      'cancelled',
    ])
    expect(resumed.events[4]).toMatchObject({ outcome: { type: 'success' } })
    expect(parsedState(server.dbPath, threadId)).toEqual({ releases: [], deployments: [] })
    // The thread continues afterwards.
    const next = await server.postRun(runInput(threadId, [userMessage('hello there')]))
    expect(next.status).toBe(200)
    expect(textOf(next.events)).toMatch(/I can publish and deploy releases/)
  })

  it('ask_user: input_required with the caller schema, then confirms the choice', async () => {
    const threadId = newThreadId()
    const first = await server.postRun(runInput(threadId, [userMessage('please choose an environment')]))
    const [ask] = interruptsOf(first.events)
    expect(ask).toMatchObject({ reason: 'input_required', message: 'Which environment should I use?' })
    expect(ask!.responseSchema).toMatchObject({
      required: ['environment'],
      properties: { environment: { enum: ['staging', 'production'] } },
    })
    const resumed = await server.postRun(
      resumeInput(threadId, [
        { interruptId: ask!.id, status: 'resolved', payload: { environment: 'production', notes: 'after 6pm' } },
      ]),
    )
    expect(toolResults(resumed.events)).toEqual([
      { toolCallId: ask!.toolCallId, content: { environment: 'production', notes: 'after 6pm' } },
    ])
    expect(textOf(resumed.events)).toBe('You chose production. I will use production from now on. Notes: after 6pm.')
  })

  it('anything else: a short answer, no tools, success', async () => {
    const res = await server.postRun(runInput(newThreadId(), [userMessage('what is up?')]))
    expect(types(res.events)).not.toContain(EventType.TOOL_CALL_START)
    expect(res.events[res.events.length - 1]).toMatchObject({
      type: EventType.RUN_FINISHED,
      outcome: { type: 'success' },
    })
  })
})
