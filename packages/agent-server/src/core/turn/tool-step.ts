import type { AgUiEvent, AssistantMessage, DecisionRecord, PermissionRule } from '@interlude/protocol'
import type { ResolvedTool } from '../../agent/tool.ts'
import type { ToolCallRecord } from '../../store/store.ts'
import { ev } from '../ev.ts'
import { interruptBatch, interruptFor } from '../tools/interrupts.ts'
import type { PendingInterrupt } from '../tools/interrupts.ts'
import { oversizedPlaceholder, oversizedVerdict } from '../tools/oversized-args.ts'
import { classifyCalls } from '../tools/tool-verdicts.ts'
import { guardrailCallInterrupt } from '../guardrails/guardrail-interrupts.ts'
import { guardCalls } from './guardrail-step.ts'
import { grantVerdicts } from './grant-step.ts'
import { observeCall } from '../tools/observation.ts'
import type { Verdict } from '../tools/tool-verdicts.ts'
import type { ModelResponse } from './model-events.ts'
import { sized } from './model-window.ts'
import { runHeldCalls } from './held-calls.ts'
import { expiryDefaults, runEffect } from './run-effect.ts'
import type { CallText, Step, Turn } from './turn-state.ts'

/**
 * The tool step: a model response's calls are recorded, what needs no decision is settled or run, and the rest
 * pauses the turn in one batch.
 */
export async function* handleToolCalls(
  turn: Turn,
  response: ModelResponse,
): AsyncGenerator<AgUiEvent, Step, undefined> {
  // Oversized arguments are refused and never stored: a placeholder takes their place in the history, so one runaway
  // output cannot be re-sent on every later turn (docs/decisions.md#the-model-boundary).
  const maxArgs = turn.deps.maxToolArgumentBytes
  const sizes = response.calls.map((c) => Buffer.byteLength(c.argsText, 'utf8'))
  const calls: CallText[] = response.calls.map((c, i) =>
    sizes[i]! > maxArgs ? { ...c, argsText: oversizedPlaceholder(sizes[i]!) } : c,
  )
  const assistant: AssistantMessage = {
    id: response.messageId,
    role: 'assistant',
    ...(response.text.length > 0 ? { content: response.text } : {}),
    toolCalls: calls.map((c) => ({
      id: c.id,
      type: 'function' as const,
      function: { name: c.name, arguments: c.argsText },
    })),
  }
  // Checked before anything of the response is stored: its calls then never wait for results.
  const { bytes } = sized(assistant)
  turn.checkCap(1, bytes)
  const kept = response.calls.filter((_, i) => sizes[i]! <= maxArgs)
  const classified = await classifyCalls(kept, turn.verdicts, turn.deps.maxInterruptsPerBatch)
  let next = 0
  const guarded: Verdict[] = yield* guardCalls(
    turn,
    calls,
    response.calls.map((_, i) => (sizes[i]! > maxArgs ? oversizedVerdict(sizes[i]!, maxArgs) : classified[next++]!)),
  )
  const verdicts = await grantVerdicts(turn, calls, guarded)
  await turn.appendMessage(assistant, bytes)
  const records = await turn.recordCalls(response.messageId, calls, verdicts)
  return yield* processCalls(turn, records, verdicts)
}

/**
 * Settles, runs or pauses recorded calls by their verdicts (one model response's calls). Under the agent's
 * `pausePolicy: 'hold'` (docs/decisions.md#a-turn-keeps-its-promises) a response with a call that waits for someone —
 * a person's decision, a browser tab's or an external system's result — runs none of its free calls before that is
 * over: they stay `pending` (held) and run afterwards, in the model's order (`held-calls.ts`). An external call is
 * dispatched at once when the response has no decision to wait for (its dispatch is the question); with one, it is
 * held like the rest. A call that asks from inside `execute` is only known to ask when it runs: the calls before it
 * have run, the calls after it are held.
 */
export async function* processCalls(
  turn: Turn,
  calls: readonly ToolCallRecord[],
  verdicts: readonly Verdict[],
): AsyncGenerator<AgUiEvent, Step, undefined> {
  // Everything that needs no decision is settled before the pause, so denied calls never look pending.
  const interrupts: PendingInterrupt[] = []
  const hold = turn.deps.agent.pausePolicy === 'hold'
  const decides = verdicts.some((v) => v.kind === 'interrupt' || v.kind === 'guardrail')
  const awaits = decides || verdicts.some((v) => v.kind === 'client' || v.kind === 'external')
  for (let i = 0; i < calls.length; i++) {
    const verdict = verdicts[i]!
    const record = calls[i]!
    switch (verdict.kind) {
      case 'reject':
        yield* turn.settle(record, 'rejected', {
          status: 'error',
          error: verdict.error,
          ...(verdict.details ? { issues: verdict.details } : {}),
        })
        break
      case 'deny':
        yield* turn.settle(record, 'denied', { status: 'denied', reason: verdict.reason })
        break
      case 'execute':
      case 'external':
        if (verdict.rule) yield* ruleDecision(turn, verdict.rule, record.toolCallId)
        // The grant's record was written by its take (`grant-step.ts`).
        if (verdict.grant) yield ev.decision(verdict.grant)
        // Held: stays `pending`; the rule's record (a decision already made) is written now.
        if (hold && ((verdict.kind === 'external' ? decides : awaits) || turn.asked.length > 0)) break
        yield* runEffect(turn, verdict.tool, record, verdict.args)
        break
      case 'interrupt': {
        const asked = yield* approvalInterrupt(turn, verdict.tool, verdict.args, record)
        if (asked) interrupts.push(asked)
        break
      }
      case 'guardrail':
        // docs/guardrails.md: a person decides whether the arguments may go on (to the approval, or to run).
        interrupts.push(
          guardrailCallInterrupt(verdict.tool, record.toolCallId, verdict.args, verdict.failure, expiryDefaults(turn)),
        )
        break
      case 'client':
        break
    }
  }
  if (interrupts.length > 0 || turn.asked.length > 0) return await storeBatch(turn, interrupts)
  if (turn.awaitingResults().length > 0) return { kind: 'waiting' }
  // Every external call of the response answered at its dispatch: the held calls run now, in the model's order.
  if (hold) {
    yield* runHeldCalls(turn, calls)
    if (turn.asked.length > 0) return await storeBatch(turn, [])
    if (turn.awaitingResults().length > 0) return { kind: 'waiting' }
  }
  return { kind: 'continue' }
}

/**
 * The approval interrupt of a call (docs/approvals.md#stale-approvals): asked with what it is about; a failing
 * `observe` denies the call instead (`undefined`).
 */
export async function* approvalInterrupt(
  turn: Turn,
  tool: ResolvedTool,
  args: unknown,
  record: ToolCallRecord,
): AsyncGenerator<AgUiEvent, PendingInterrupt | undefined, undefined> {
  const observe = tool.kind !== 'human' && tool.definition.observe !== undefined
  const observed = observe
    ? await observeCall(tool, args, turn.policyContext(record.toolCallId), turn.deps.logError)
    : undefined
  if (observed?.ok === false) {
    yield* turn.settle(record, 'denied', { status: 'denied', reason: OBSERVE_FAILED })
    return undefined
  }
  return interruptFor(tool, record.toolCallId, args, expiryDefaults(turn), observed)
}

/** Stores one batch of the calls' interrupts and the questions tools asked (in that order); the turn pauses on it. */
export async function storeBatch(turn: Turn, interrupts: readonly PendingInterrupt[]): Promise<Step> {
  const all = [...interrupts, ...turn.asked]
  turn.asked = []
  const batch = interruptBatch(turn.plan, all, turn.deps.now())
  // Durably stored before the RUN_FINISHED frame exists.
  await turn.writes.createBatch(batch)
  for (const i of batch.interrupts) turn.batched.add(i.toolCallId)
  return { kind: 'interrupt', interrupts: batch.interrupts.map((i) => i.interrupt) }
}

/** The `via: "rule"` record of a call a remembered permission approved, stored and in the log. */
export async function* ruleDecision(turn: Turn, rule: PermissionRule, toolCallId: string): AsyncGenerator<AgUiEvent> {
  const record: DecisionRecord = {
    threadId: turn.plan.threadId,
    runId: turn.plan.runId,
    interruptIds: [],
    entries: [],
    decidedBy: rule.createdBy,
    via: 'rule',
    at: new Date(turn.deps.now()).toISOString(),
    ruleId: rule.ruleId,
    toolCallId,
  }
  await turn.writes.recordRuleDecision(record)
  yield ev.decision(record)
}

/** The denial of a call whose `observe` threw (fail closed, like a throwing `authorize`). */
export const OBSERVE_FAILED = 'The check of what this approval is about failed.'
