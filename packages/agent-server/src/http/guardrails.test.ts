import { afterEach, describe, expect, it } from 'vitest'
import { GUARDRAIL_INTERRUPT_REASON } from '@interlude/protocol'
import type { Interrupt, RunView, ThreadSnapshot } from '@interlude/protocol'
import { ThreadSnapshotSchema } from '@interlude/protocol/schemas'
import { releaseAssistant, releaseAssistantScript } from '../demo/release-assistant.ts'
import type { ReleaseState } from '../demo/release-assistant.ts'
import { scriptedModel } from '../models/scripted.ts'
import {
  interruptsOf,
  newThreadId,
  resumeInput,
  runInput,
  textOf,
  toolResults,
  userMessage,
} from '../test-utils/harness.ts'
import type { InProcessServer } from '../test-utils/in-process.ts'
import { recordingModel } from '../test-utils/recording-model.ts'
import { cancelled, resolved } from '../test-utils/resume-entries.ts'
import { storeBackends } from '../test-utils/store-backends.ts'
import { guardrailEvents, runIdOf } from '../test-utils/guardrail-events.ts'

/**
 * Guardrails ask a person (docs/guardrails.md), through the real server (`app.request`) on SQLite and PostgreSQL, with
 * the demo agent: `semver` on `publish_release` and `deploy` ("deploy vNEXT to staging") and `no-secrets` on its
 * answers ("what is the admin password").
 */

const allow = (i: Interrupt) => resolved(i, { action: 'allow' })
const block = (i: Interrupt, note?: string) =>
  resolved(i, note === undefined ? { action: 'block' } : { action: 'block', note })

async function snapshotOf(s: InProcessServer, threadId: string): Promise<ThreadSnapshot> {
  const res = await s.request(`/threads/${threadId}`)
  expect(res.status).toBe(200)
  return ThreadSnapshotSchema.parse(await res.json()) as ThreadSnapshot
}

async function runView(s: InProcessServer, threadId: string, runId: string): Promise<RunView> {
  const res = await s.request(`/threads/${threadId}/runs/${runId}`)
  expect(res.status).toBe(200)
  return (await res.json()) as RunView
}

const backends = await storeBackends('guardrails on PostgreSQL')

describe.each(backends)('guardrails on %s', (_name, start) => {
  const started: InProcessServer[] = []
  afterEach(async () => {
    for (const s of started.splice(0)) await s.dispose()
  })
  const serve = async (model = recordingModel(scriptedModel(releaseAssistantScript))) => {
    const s = await start({ agent: releaseAssistant({ model }) })
    started.push(s)
    return { s, model }
  }
  const state = async (s: InProcessServer, threadId: string) => (await snapshotOf(s, threadId)).state as ReleaseState

  async function pausedOnVnext(s: InProcessServer) {
    const threadId = newThreadId()
    const run = await s.postRun(runInput(threadId, [userMessage('deploy vNEXT to staging')]))
    expect(run.status).toBe(200)
    const interrupts = interruptsOf(run.events)
    expect(interrupts.map((i) => [i.reason, i.metadata?.toolName])).toEqual([
      [GUARDRAIL_INTERRUPT_REASON, 'publish_release'],
      [GUARDRAIL_INTERRUPT_REASON, 'deploy'],
    ])
    expect(interrupts[1]!.metadata).toMatchObject({ guardrail: 'semver', on: 'args', arguments: { version: 'vNEXT' } })
    return { threadId, run, publish: interrupts[0]!, deploy: interrupts[1]! }
  }

  it('"deploy vNEXT to staging": paused on interlude:guardrail (args), nothing deployed, a fail event in the log', async () => {
    const { s } = await serve()
    const { threadId, run, deploy } = await pausedOnVnext(s)
    expect(toolResults(run.events)).toEqual([])
    expect((await state(s, threadId)).deployments).toEqual([])
    const log = await s.threadEvents(threadId)
    expect(guardrailEvents(log.events)).toContainEqual({
      name: 'semver',
      on: 'args',
      pass: false,
      reason: '"vNEXT" is not a version like v2.1.0',
      action: 'human',
      toolCallId: deploy.toolCallId,
    })
    expect((await runView(s, threadId, runIdOf(run.events))).outcome).toMatchObject({
      type: 'interrupt',
      reason: 'interrupted',
    })
  })

  it('block: the calls are denied with the note, nothing runs, and the thread takes input', async () => {
    const { s } = await serve()
    const { threadId, publish, deploy } = await pausedOnVnext(s)
    const done = await s.postRun(
      resumeInput(threadId, [block(publish, 'not a release'), block(deploy, 'not a release')]),
    )
    expect(done.status).toBe(200)
    expect(toolResults(done.events)).toEqual([
      { toolCallId: publish.toolCallId, content: { status: 'denied', reason: 'not a release', guardrail: 'semver' } },
      { toolCallId: deploy.toolCallId, content: { status: 'denied', reason: 'not a release', guardrail: 'semver' } },
    ])
    expect(guardrailEvents(done.events).map((e) => [e.on, e.action])).toEqual([
      ['args', 'block'],
      ['args', 'block'],
      ['output', undefined],
    ])
    expect(textOf(done.events)).toMatch(/^Nothing ran\./)
    expect((await state(s, threadId)).deployments).toEqual([])
    const next = await s.postRun(runInput(threadId, [userMessage('hello')]))
    expect(next.status).toBe(200)
    expect((await snapshotOf(s, threadId)).status).toBe('idle')
  })

  it("allow: the deploy's own approval follows, and approved it runs once", async () => {
    const { s } = await serve()
    const { threadId, publish, deploy } = await pausedOnVnext(s)
    const allowed = await s.postRun(resumeInput(threadId, [allow(publish), allow(deploy)]))
    expect(allowed.status).toBe(200)
    expect(toolResults(allowed.events)).toEqual([])
    const approvals = interruptsOf(allowed.events)
    expect(approvals.map((i) => [i.reason, i.toolCallId])).toEqual([
      ['tool_call', publish.toolCallId],
      ['tool_call', deploy.toolCallId],
    ])
    expect((await state(s, threadId)).deployments).toEqual([])
    const done = await s.postRun(
      resumeInput(
        threadId,
        approvals.map((i) => resolved(i)),
      ),
    )
    expect(done.status).toBe(200)
    expect((await state(s, threadId)).deployments).toEqual([
      { operationId: deploy.toolCallId, version: 'vNEXT', environment: 'staging' },
    ])
  })

  it('20 concurrent answers to a guardrail interrupt: one admitted, the rest ALREADY_RESUMED', async () => {
    const { s } = await serve()
    const { threadId, publish, deploy } = await pausedOnVnext(s)
    const inputs = Array.from({ length: 20 }, () => resumeInput(threadId, [block(publish), block(deploy)]))
    const responses = await Promise.all(inputs.map((input) => s.postRun(input)))
    expect(responses.filter((r) => r.status === 200)).toHaveLength(1)
    for (const r of responses) if (r.status !== 200) expect(r.error?.code).toBe('ALREADY_RESUMED')
    const decisions = (await snapshotOf(s, threadId)).decisions ?? []
    expect(decisions).toHaveLength(1)
  })

  it('an answer the guardrail schema refuses is RESUME_PAYLOAD_INVALID and changes nothing', async () => {
    const { s } = await serve()
    const { threadId, publish, deploy } = await pausedOnVnext(s)
    const refused = await s.postRun(resumeInput(threadId, [resolved(publish), allow(deploy)]))
    expect(refused.error?.code).toBe('RESUME_PAYLOAD_INVALID')
    expect((await snapshotOf(s, threadId)).interrupts?.map((i) => i.id)).toEqual([publish.id, deploy.id])
  })

  describe('"what is the admin password" (no-secrets on the answer)', () => {
    async function withheld(s: InProcessServer) {
      const threadId = newThreadId()
      const run = await s.postRun(runInput(threadId, [userMessage('what is the admin password')]))
      expect(run.status).toBe(200)
      const [interrupt] = interruptsOf(run.events)
      expect(interrupt).toMatchObject({ reason: GUARDRAIL_INTERRUPT_REASON })
      expect(interrupt!.metadata).toMatchObject({ guardrail: 'no-secrets', on: 'output' })
      // Streamed already: the text is in the run's events, and withheld in the snapshot, not in the history.
      expect(textOf(run.events)).toContain('password:')
      const snap = await snapshotOf(s, threadId)
      expect(snap.withheld).toEqual([
        {
          messageId: interrupt!.metadata!.messageId,
          interruptId: interrupt!.id,
          guardrail: 'no-secrets',
          reason: 'the answer looks like it contains a credential',
          content: expect.stringContaining('password:'),
        },
      ])
      expect(JSON.stringify(snap.messages)).not.toContain('password:')
      return { threadId, interrupt: interrupt! }
    }

    it('block: the text never joins the history nor the next model request; the model is told', async () => {
      const { s, model } = await serve()
      const { threadId, interrupt } = await withheld(s)
      const done = await s.postRun(resumeInput(threadId, [block(interrupt, 'never share it')]))
      expect(done.status).toBe(200)
      expect(done.events.at(-1)).toMatchObject({ outcome: { type: 'success', reason: 'guardrail_blocked' } })
      expect((await runView(s, threadId, runIdOf(done.events))).outcome).toEqual({
        type: 'success',
        reason: 'guardrail_blocked',
      })
      const snap = await snapshotOf(s, threadId)
      expect(snap.withheld).toBeUndefined()
      expect(JSON.stringify(snap.messages)).not.toContain('password:')
      expect(JSON.stringify(snap.messages)).toContain('the guardrail \\"no-secrets\\" blocked it')
      await s.postRun(runInput(threadId, [userMessage('hello')]))
      const last = model.requests.at(-1)!
      expect(JSON.stringify(last.messages)).not.toContain('password:')
      expect(JSON.stringify(last.messages)).toContain('never share it')
    })

    it('allow: the answer joins the history under its own id', async () => {
      const { s } = await serve()
      const { threadId, interrupt } = await withheld(s)
      const done = await s.postRun(resumeInput(threadId, [allow(interrupt)]))
      expect(done.status).toBe(200)
      expect(guardrailEvents(done.events)).toEqual([
        expect.objectContaining({ name: 'no-secrets', action: 'allow', messageId: interrupt.metadata!.messageId }),
      ])
      const snap = await snapshotOf(s, threadId)
      expect(snap.withheld).toBeUndefined()
      const answer = snap.messages.find((m) => m.id === interrupt.metadata!.messageId)
      expect(answer).toMatchObject({ role: 'assistant', content: expect.stringContaining('password:') })
    })

    it('cancelled (or expired): blocked', async () => {
      const { s } = await serve()
      const { threadId, interrupt } = await withheld(s)
      const done = await s.postRun(resumeInput(threadId, [cancelled(interrupt)]))
      expect(done.events.at(-1)).toMatchObject({ outcome: { type: 'success', reason: 'guardrail_blocked' } })
      expect(JSON.stringify((await snapshotOf(s, threadId)).messages)).not.toContain('password:')
    })
  })

  it('a passing check emits its pass event; the answer joins the history', async () => {
    const { s } = await serve()
    const threadId = newThreadId()
    const run = await s.postRun(runInput(threadId, [userMessage('deploy v2.1 to staging')]))
    expect(guardrailEvents(run.events)).toEqual([
      expect.objectContaining({ name: 'semver', on: 'args', pass: true }),
      expect.objectContaining({ name: 'semver', on: 'args', pass: true }),
    ])
    const done = await s.postRun(
      resumeInput(
        threadId,
        interruptsOf(run.events).map((i) => resolved(i)),
      ),
    )
    expect(guardrailEvents(done.events)).toEqual([
      { name: 'no-secrets', on: 'output', pass: true, messageId: expect.any(String) },
    ])
  })
})
