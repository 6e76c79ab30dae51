import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MAINTENANCE_WINDOW_SCHEMA } from '../demo/maintenance-window.ts'
import { interruptsOf, newThreadId, resumeInput, runInput, textOf, userMessage } from '../test-utils/harness.ts'
import type { InProcessServer } from '../test-utils/in-process.ts'
import { startInProcess } from '../test-utils/in-process.ts'

let server: InProcessServer
beforeAll(async () => {
  server = await startInProcess()
})
afterAll(async () => {
  await server.dispose()
})

const ANSWER = {
  strategy: 'canary',
  region: 'eu-west',
  day: '2026-12-01',
  startsAt: '2026-12-01T09:30:00.000Z',
  contact: 'oncall@example.com',
  runbook: 'https://example.com/runbook',
}

describe('the demo maintenance window: a richly presented question (docs/demo-agent.md)', () => {
  it('sends the presentation keywords unchanged and checks formats with Ajv before admitting the answer', async () => {
    const threadId = newThreadId()
    const first = await server.postRun(runInput(threadId, [userMessage('please schedule a maintenance window')]))
    expect(first.status).toBe(200)
    const [question] = interruptsOf(first.events)
    expect(question).toMatchObject({ reason: 'input_required', message: 'When should the maintenance window run?' })
    expect(question!.responseSchema).toEqual(MAINTENANCE_WINDOW_SCHEMA)

    // A malformed email and date are refused like any invalid answer: typed, nothing changes.
    const bad = await server.postRun(
      resumeInput(threadId, [
        { interruptId: question!.id, status: 'resolved', payload: { ...ANSWER, contact: 'nobody', day: '1 Dec' } },
      ]),
    )
    expect(bad.status).toBe(422)
    expect(bad.error?.code).toBe('RESUME_PAYLOAD_INVALID')
    const details = bad.error?.details as { errors: Record<string, { path: string; keyword: string }[]> }
    const problems = details.errors[question!.id]
    expect(problems?.map((p) => `${p.path}:${p.keyword}`).sort()).toEqual(['/contact:format', '/day:format'])

    const good = await server.postRun(
      resumeInput(threadId, [{ interruptId: question!.id, status: 'resolved', payload: ANSWER }]),
    )
    expect(good.status).toBe(200)
    expect(textOf(good.events)).toBe(
      'Maintenance scheduled: canary rollout in eu-west on 2026-12-01, starting 2026-12-01T09:30:00.000Z; ' +
        'on call: oncall@example.com. Runbook: https://example.com/runbook.',
    )
  })
})
