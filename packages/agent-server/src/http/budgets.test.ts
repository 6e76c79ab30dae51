import { afterEach, describe, expect, it } from 'vitest'
import { BUDGET_INTERRUPT_REASON, EventType } from '@interlude/protocol'
import type { RunView } from '@interlude/protocol'
import type { AgentDefinition } from '../agent/agent.ts'
import { releaseAssistant, releaseAssistantScript } from '../demo/release-assistant.ts'
import { scriptedModel } from '../models/scripted.ts'
import { runIdOf } from '../test-utils/guardrail-events.ts'
import { interruptsOf, newThreadId, resumeInput, runInput, textOf, userMessage } from '../test-utils/harness.ts'
import type { InProcessServer } from '../test-utils/in-process.ts'
import { recordingModel } from '../test-utils/recording-model.ts'
import { cancelled, resolved } from '../test-utils/resume-entries.ts'
import { commandAgent } from '../test-utils/test-agents.ts'
import { storeBackends } from '../test-utils/store-backends.ts'

/**
 * Budgets ask a person (docs/guardrails.md#budgets), through the real server (`app.request`) on SQLite and
 * PostgreSQL: the demo's "check status until green" loops on `check_status`; its `maxIterations` of 8 pauses the run.
 */

const backends = await storeBackends('budgets on PostgreSQL')
const defaultAgent = () => releaseAssistant({ model: scriptedModel(releaseAssistantScript) }) as AgentDefinition

describe.each(backends)('budgets on %s', (_name, start) => {
  const started: InProcessServer[] = []
  afterEach(async () => {
    for (const s of started.splice(0)) await s.dispose()
  })
  const serve = async (agent: AgentDefinition = defaultAgent()) => {
    const s = await start({ agent })
    started.push(s)
    return s
  }
  const view = async (s: InProcessServer, threadId: string, runId: string) =>
    (await (await s.request(`/threads/${threadId}/runs/${runId}`)).json()) as RunView

  it('"check status until green": paused at 8 model calls; { extend: 2 } goes on to 10; denied, budget_exhausted', async () => {
    const model = recordingModel(scriptedModel(releaseAssistantScript))
    const s = await serve(releaseAssistant({ model }) as AgentDefinition)
    const threadId = newThreadId()
    const run = await s.postRun(runInput(threadId, [userMessage('check status until green')]))
    expect(run.status).toBe(200)
    const [budget] = interruptsOf(run.events)
    expect(budget).toMatchObject({
      reason: BUDGET_INTERRUPT_REASON,
      metadata: { kind: 'iterations', used: 8, limit: 8 },
      responseSchema: { required: ['extend'] },
    })
    expect(model.requests).toHaveLength(8)

    const extended = await s.postRun(resumeInput(threadId, [resolved(budget!, { extend: 2 })]))
    expect(extended.status).toBe(200)
    expect(model.requests).toHaveLength(10)
    const [again] = interruptsOf(extended.events)
    expect(again).toMatchObject({
      reason: BUDGET_INTERRUPT_REASON,
      metadata: { kind: 'iterations', used: 10, limit: 10 },
    })

    const denied = await s.postRun(resumeInput(threadId, [cancelled(again!)]))
    expect(denied.status).toBe(200)
    expect(model.requests).toHaveLength(10)
    expect(denied.events.at(-1)).toMatchObject({
      type: EventType.RUN_FINISHED,
      outcome: { type: 'success', reason: 'budget_exhausted' },
    })
    expect(textOf(denied.events)).toBe('I stopped here: this run used its budget of 10 model calls without finishing.')
    expect(await view(s, threadId, runIdOf(denied.events))).toMatchObject({
      status: 'finished',
      outcome: { type: 'success', reason: 'budget_exhausted' },
    })
    // The thread takes input again.
    const next = await s.postRun(runInput(threadId, [userMessage('hello')]))
    expect(next.status).toBe(200)
  })

  it('an extension the schema refuses is RESUME_PAYLOAD_INVALID; the budget interrupt stays open', async () => {
    const s = await serve()
    const threadId = newThreadId()
    const run = await s.postRun(runInput(threadId, [userMessage('check status until green')]))
    const [budget] = interruptsOf(run.events)
    const refused = await s.postRun(resumeInput(threadId, [resolved(budget!, { extend: 0 })]))
    expect(refused.error?.code).toBe('RESUME_PAYLOAD_INVALID')
    const snap = (await (await s.request(`/threads/${threadId}`)).json()) as { interrupts?: { id: string }[] }
    expect(snap.interrupts?.map((i) => i.id)).toEqual([budget!.id])
  })

  it('maxTokensPerRun: paused with kind tokens once the run used its tokens', async () => {
    const usage = { inputTokens: 60, outputTokens: 40, totalTokens: 100 }
    const model = {
      name: 'counting',
      async *stream() {
        yield { type: 'usage', usage } as const
        yield { type: 'tool_call_start', id: undefined, name: 'noop', key: '0' } as const
      },
    }
    const noop = { name: 'noop', description: 'x', parameters: { type: 'object' }, execute: () => 'ok' }
    const s = await serve(commandAgent([noop], { model, maxTokensPerRun: 250 }))
    const threadId = newThreadId()
    const run = await s.postRun(runInput(threadId, [userMessage('go')]))
    expect(interruptsOf(run.events)).toMatchObject([
      { reason: BUDGET_INTERRUPT_REASON, metadata: { kind: 'tokens', used: 300, limit: 250 } },
    ])
    const extended = await s.postRun(resumeInput(threadId, [resolved(interruptsOf(run.events)[0]!, { extend: 100 })]))
    expect(interruptsOf(extended.events)).toMatchObject([{ metadata: { kind: 'tokens', used: 400, limit: 350 } }])
  })
})
