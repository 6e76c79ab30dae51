import type { AgUiEvent, AssistantMessage, DecisionRecord, PermissionRule } from '@interlude/protocol'
import type { ResolvedTool } from '../../agent/tool.ts'
import type { ToolCallRecord } from '../../store/store.ts'
import { ev } from '../ev.ts'
import { editedResult } from '../tools/edited-result.ts'
import { toolInvocation } from '../tools/effects-ledger.ts'
import type { AskedOutcome, EffectOutcome } from '../tools/effects-ledger.ts'
import { interruptBatch, interruptFor } from '../tools/interrupts.ts'
import type { PendingInterrupt } from '../tools/interrupts.ts'
import { oversizedPlaceholder, oversizedVerdict } from '../tools/oversized-args.ts'
import { runServerTool } from '../tools/server-tool-run.ts'
import { EMPTY_CHECKPOINT } from '../tools/tool-asks.ts'
import type { AskSession, ToolCheckpoint } from '../tools/tool-asks.ts'
import { askInterruptFor } from '../tools/tool-interrupts.ts'
import { classifyCalls } from '../tools/tool-verdicts.ts'
import { guardrailCallInterrupt } from '../guardrails/guardrail-interrupts.ts'
import { guardCalls } from './guardrail-step.ts'
import { observeCall } from '../tools/observation.ts'
import type { Verdict } from '../tools/tool-verdicts.ts'
import type { ModelResponse } from './model-events.ts'
import { sized } from './model-window.ts'
import { subagentRunner } from './subagent-run.ts'
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
  const verdicts: Verdict[] = yield* guardCalls(
    turn,
    calls,
    response.calls.map((_, i) => (sizes[i]! > maxArgs ? oversizedVerdict(sizes[i]!, maxArgs) : classified[next++]!)),
  )
  await turn.appendMessage(assistant, bytes)
  const records = await turn.recordCalls(response.messageId, calls, verdicts)
  return yield* processCalls(turn, records, verdicts)
}

/**
 * Settles, runs or pauses recorded calls by their verdicts (one model response's calls). Under the agent's
 * `pausePolicy: 'hold'` (docs/decisions.md#a-turn-keeps-its-promises) a response with a call that needs a person runs
 * none of its calls before the batch is decided: the free ones stay `pending` (held) and run after the decision, in
 * the model's order (`resume-step.ts`). A call that asks from inside `execute` is only known to ask when it runs: the
 * calls before it have run, the calls after it are held.
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
        // Held: stays `pending`; the rule's record (a decision already made) is written now.
        if (hold && (decides || turn.asked.length > 0)) break
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
  return turn.awaitingResults().length > 0 ? { kind: 'waiting' } : { kind: 'continue' }
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

/**
 * A server tool runs now (with the answers of its questions so far, if it asked); an external tool is started and
 * its result awaited. A tool that asks past its answers leaves its questions in `turn.asked`.
 */
export async function* runEffect(
  turn: Turn,
  tool: ResolvedTool,
  record: ToolCallRecord,
  args: unknown,
  edited = false,
  checkpoint: ToolCheckpoint = EMPTY_CHECKPOINT,
): AsyncGenerator<AgUiEvent> {
  const { deps } = turn
  const signal = deps.toolSignal ?? deps.signal
  let outcome: EffectOutcome | 'awaiting_result' | undefined
  if (tool.kind === 'external') {
    const invocation = () => toolInvocation(turn.policyContext(record.toolCallId), signal)
    outcome = await turn.ledger.dispatch(tool, record.toolCallId, args, invocation)
    if (outcome === 'awaiting_result') turn.markCall(record, 'awaiting_result')
  } else {
    const { outcome: executed, asks } = yield* runServerTool({
      tool,
      toolCallId: record.toolCallId,
      args,
      checkpoint,
      policy: turn.policyContext(record.toolCallId),
      toolSignal: signal,
      ledger: turn.ledger,
      writes: turn.writes,
      validators: deps.validators,
      logError: deps.logError,
      onStateCommitted: (state) => turn.setState(state),
      ...(tool.subagent ? { subagent: subagentRunner(tool, deps.signal, deps.validators, deps.logError) } : {}),
    })
    if (executed.status === 'asked') {
      await released(turn, tool, record, asks, executed, { args, edited })
      return
    }
    outcome = executed
  }
  if (typeof outcome === 'object')
    yield* turn.settle(
      record,
      outcome.status,
      edited ? editedResult(args, outcome.result) : outcome.result,
      outcome.state,
    )
}

/**
 * The tool asked: its claim is released (`awaiting_decision`) and the arguments it runs with are kept, before the
 * batch is stored — a crash in between leaves a call that is not started and runs (and asks) again.
 */
async function released(
  turn: Turn,
  tool: ResolvedTool,
  record: ToolCallRecord,
  asks: AskSession,
  asked: AskedOutcome,
  run: { readonly args: unknown; readonly edited: boolean },
): Promise<void> {
  const checkpoint = asks.checkpoint
  if (checkpoint.args === undefined)
    await turn.writes.saveCheckpoint(record.toolCallId, { ...checkpoint, args: run.args, edited: run.edited })
  if (asks.claimed || record.status !== 'awaiting_decision' || asked.state !== undefined)
    await turn.writes.settle({
      toolCallId: record.toolCallId,
      status: 'awaiting_decision',
      result: undefined,
      message: undefined,
      ...(asked.state !== undefined ? { state: asked.state } : {}),
    })
  if (asked.state !== undefined) turn.setState(asked.state)
  turn.markCall(record, 'awaiting_decision')
  for (const request of asked.requests)
    turn.asked.push(askInterruptFor(tool, record.toolCallId, request, expiryDefaults(turn)))
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

export function expiryDefaults(turn: Turn): { ttlMs: number; onExpiry: Turn['deps']['onExpiry'] } {
  return { ttlMs: turn.deps.interruptTtlMs, onExpiry: turn.deps.onExpiry }
}
