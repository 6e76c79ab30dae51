import type { AgUiEvent } from '@interlude/protocol'
import { settleUnsettled } from '../tools/effects-ledger.ts'
import { classifyCalls } from '../tools/tool-verdicts.ts'
import { processCalls } from './tool-step.ts'
import { guardCalls } from './guardrail-step.ts'
import { grantVerdicts } from './grant-step.ts'
import type { Step, Turn } from './turn-state.ts'

/**
 * The continuation step (docs/architecture.md, "Durable continuation"): effects the dead attempt left `started` are
 * never run again — the tool's `reconcile` settles them, or they become `unknown` (listed in the snapshot's
 * `unsettledEffects`).
 */
export async function* settleUnsettledEffects(turn: Turn): AsyncGenerator<AgUiEvent, void, undefined> {
  const { store, agent, logError } = turn.deps
  const { threadId, principal } = turn.plan
  for (const call of await store.listToolCalls(threadId, { status: ['started'] })) {
    const outcome = await settleUnsettled(
      agent.tools.get(call.toolName),
      call,
      { threadId, principal, state: turn.state },
      logError,
    )
    yield* turn.settle(call, outcome.status, outcome.result, outcome.state)
  }
}

/**
 * The calls of the last model response the dead attempt recorded (or only wrote into the history) but did not
 * handle: handled now as the tool step would have — a tool whose effect never started runs once, a call needing a
 * decision pauses unless a bounded grant approves it (a grant the dead attempt took for the call is found again, not
 * taken twice). A batch the attempt already stored ends the run as its pause. `undefined`: nothing was left.
 */
export async function* handleLeftCalls(turn: Turn): AsyncGenerator<AgUiEvent, Step | undefined, undefined> {
  const { store, maxInterruptsPerBatch } = turn.deps
  const { threadId, runId } = turn.plan
  const open = await store.getOpenBatch(threadId)
  if (open !== undefined && open.runId === runId) {
    for (const i of open.interrupts) turn.batched.add(i.toolCallId)
    return { kind: 'interrupt', interrupts: open.interrupts.map((i) => i.interrupt) }
  }
  const last = turn.lastMessage()
  const written = last?.role === 'assistant' ? (last.toolCalls ?? []) : []
  // One response's calls are recorded in one write: none of them is, or all are.
  if (written.length > 0 && (await store.getToolCall(threadId, written[0]!.id)) === undefined) {
    const calls = written.map((c) => ({ id: c.id, name: c.function.name, argsText: c.function.arguments }))
    const guarded = yield* guardCalls(turn, calls, await classifyCalls(calls, turn.verdicts, maxInterruptsPerBatch))
    const verdicts = await grantVerdicts(turn, calls, guarded, true)
    const records = await turn.recordCalls(last!.id, calls, verdicts)
    return yield* processCalls(turn, records, verdicts)
  }
  const left = turn.leftCalls()
  if (left.length === 0) return undefined
  const texts = left.map((c) => ({ id: c.toolCallId, name: c.toolName, argsText: c.argsText }))
  const verdicts = yield* guardCalls(turn, texts, await classifyCalls(texts, turn.verdicts, maxInterruptsPerBatch))
  return yield* processCalls(turn, left, verdicts)
}
