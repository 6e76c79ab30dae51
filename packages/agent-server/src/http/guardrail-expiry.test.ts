/**
 * A guardrail question nobody answers (docs/guardrails.md, docs/approvals.md#deadlines): at its deadline the expiry
 * sweep decides it as `system:expiry` — nothing the guardrail stopped runs, a withheld answer never joins the history,
 * and the thread takes new input. Over `app.request` on SQLite with an injected clock and the sweep run by hand.
 */
import { afterEach, expect, it } from 'vitest'
import { GUARDRAIL_INTERRUPT_REASON, SYSTEM_EXPIRY_PRINCIPAL } from '@interlude/protocol'
import type { ThreadSnapshot } from '@interlude/protocol'
import { releaseAssistant, releaseAssistantScript } from '../demo/release-assistant.ts'
import type { ReleaseState } from '../demo/release-assistant.ts'
import { scriptedModel } from '../models/scripted.ts'
import { interruptsOf, newThreadId, runInput, userMessage } from '../test-utils/harness.ts'
import type { InProcessServer } from '../test-utils/in-process.ts'
import { startInProcess } from '../test-utils/in-process.ts'
import { threadKey } from '../store/thread-key.ts'

const T0 = Date.parse('2032-03-01T09:00:00.000Z')
const clock = { now: T0 }
let server: InProcessServer | undefined
afterEach(async () => {
  await server?.dispose()
  server = undefined
})

async function serve(): Promise<InProcessServer> {
  clock.now = T0
  server = await startInProcess({
    agent: releaseAssistant({ model: scriptedModel(releaseAssistantScript) }),
    now: () => clock.now,
    interruptTtlSeconds: 2,
    expirySweepMs: 0,
  })
  return server
}

const snapshot = async (s: InProcessServer, threadId: string) =>
  (await (await s.request(`/threads/${threadId}`)).json()) as ThreadSnapshot

async function pausedOnGuardrail(s: InProcessServer, text: string): Promise<string> {
  const threadId = newThreadId()
  const run = await s.postRun(runInput(threadId, [userMessage(text)]))
  expect(run.status).toBe(200)
  const interrupts = interruptsOf(run.events)
  expect(interrupts.length).toBeGreaterThan(0)
  for (const i of interrupts) expect(i.reason).toBe(GUARDRAIL_INTERRUPT_REASON)
  return threadId
}

async function expire(s: InProcessServer): Promise<void> {
  clock.now = T0 + 1999
  expect(await s.app.expirySweeper.sweepOnce()).toBe(0)
  clock.now = T0 + 2000
  expect(await s.app.expirySweeper.sweepOnce()).toBe(1)
  await s.app.runs.idle()
  expect(await s.app.expirySweeper.sweepOnce()).toBe(0)
}

it('an unanswered args guardrail expires: decided by system:expiry, nothing deployed, the thread takes input', async () => {
  const s = await serve()
  const threadId = await pausedOnGuardrail(s, 'deploy vNEXT to staging')
  await expire(s)
  const key = threadKey('alice', threadId)
  const decisions = await s.store.listDecisions(key)
  expect(decisions).toHaveLength(1)
  expect(decisions[0]).toMatchObject({ decidedBy: SYSTEM_EXPIRY_PRINCIPAL, via: 'expiry' })
  const after = await snapshot(s, threadId)
  expect(after.status).toBe('idle')
  expect(after.interrupts).toBeUndefined()
  expect((after.state as ReleaseState).deployments).toEqual([])
  // Every call the guardrail stopped is closed without running.
  const calls = await s.store.listToolCalls(key, {})
  expect(calls.length).toBeGreaterThan(0)
  for (const call of calls) expect(['cancelled', 'denied']).toContain(call.status)
  const next = await s.postRun(runInput(threadId, [userMessage('hello')]))
  expect(next.status).toBe(200)
})

it('an unanswered output guardrail expires: the withheld answer never joins the history', async () => {
  const s = await serve()
  const threadId = await pausedOnGuardrail(s, 'what is the admin password')
  const paused = await snapshot(s, threadId)
  expect(paused.withheld?.length).toBe(1)
  const secret = paused.withheld![0]!.content
  await expire(s)
  const after = await snapshot(s, threadId)
  expect(after.status).toBe('idle')
  expect(after.withheld ?? []).toEqual([])
  expect(secret).toMatch(/password/)
  expect(after.messages.length).toBeGreaterThan(0)
  const history = JSON.stringify(after.messages)
  expect(history).not.toContain(secret)
  const decisions = await s.store.listDecisions(threadKey('alice', threadId))
  expect(decisions.at(-1)).toMatchObject({ decidedBy: SYSTEM_EXPIRY_PRINCIPAL })
})
