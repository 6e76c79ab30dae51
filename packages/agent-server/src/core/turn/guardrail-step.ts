import { randomUUID } from 'node:crypto'
import { messageText } from '@interlude/protocol'
import type { AgUiEvent } from '@interlude/protocol'
import type { GuardrailContext } from '../../agent/guardrail.ts'
import { clientThreadId } from '../../store/thread-key.ts'
import { runChecks } from '../guardrails/guardrail-checks.ts'
import { guardrailMessageInterrupt } from '../guardrails/guardrail-interrupts.ts'
import type { Verdict } from '../tools/tool-verdicts.ts'
import type { ModelResponse } from './model-events.ts'
import { storeBatch } from './tool-step.ts'
import { expiryDefaults } from './run-effect.ts'
import type { CallText, Step, Turn } from './turn-state.ts'

/**
 * The guardrail step (docs/guardrails.md): the checks of a run's user message (`input`), of each tool call's
 * arguments (`args`, before the call is recorded) and of a final answer (`output`, before it joins the history).
 */

function context(turn: Turn, call?: { readonly id: string; readonly name: string }): GuardrailContext {
  const { threadId, runId, principal } = turn.plan
  return {
    threadId: clientThreadId(threadId),
    runId,
    principal,
    ...(call ? { toolName: call.name, toolCallId: call.id } : {}),
  }
}

/**
 * The `args` guardrails (the agent's, then the tool's) of every call that would be asked about or run. A failure
 * asks a person (verdict `guardrail`: the call waits in the batch, and the response's other calls are held with it),
 * or — `onFail: 'retry'` with retries left — rejects the call with the reason, so the model calls again.
 */
export async function* guardCalls(
  turn: Turn,
  calls: readonly CallText[],
  verdicts: readonly Verdict[],
): AsyncGenerator<AgUiEvent, Verdict[], undefined> {
  const { agent, logError } = turn.deps
  const out = [...verdicts]
  for (let i = 0; i < calls.length; i++) {
    const verdict = verdicts[i]!
    if (verdict.kind !== 'execute' && verdict.kind !== 'external' && verdict.kind !== 'interrupt') continue
    const list = [...agent.guardrails.args, ...(agent.toolGuardrails.get(verdict.tool.name) ?? [])]
    if (list.length === 0) continue
    const call = calls[i]!
    const mayRetry = turn.guards.mayRetry.bind(turn.guards)
    const failure = yield* runChecks(
      list,
      verdict.args,
      context(turn, call),
      { toolCallId: call.id },
      logError,
      mayRetry,
    )
    if (failure === undefined) continue
    if (failure.onFail === 'retry') {
      turn.guards.retry(failure.guardrail)
      const error = `The guardrail "${failure.guardrail.name}" refused these arguments: ${failure.reason}. Call again with arguments that pass.`
      out[i] = { kind: 'reject', error }
    } else out[i] = { kind: 'guardrail', tool: verdict.tool, args: verdict.args, failure }
  }
  return out
}

/**
 * The `output` guardrails of a final answer (streamed already, not yet in the history). `pass`: it joins the history;
 * `retry`: it is dropped and the model is asked again with the reason; otherwise the run pauses with the answer
 * withheld (`interlude:guardrail`, its text in the interrupt's metadata and the snapshot's `withheld`).
 */
export async function* guardOutput(
  turn: Turn,
  response: ModelResponse,
): AsyncGenerator<AgUiEvent, 'pass' | 'retry' | Step, undefined> {
  const list = turn.deps.agent.guardrails.output
  if (list.length === 0 || response.text.length === 0) return 'pass'
  const subject = { messageId: response.messageId }
  const mayRetry = turn.guards.mayRetry.bind(turn.guards)
  const failure = yield* runChecks(list, response.text, context(turn), subject, turn.deps.logError, mayRetry)
  if (failure === undefined) return 'pass'
  if (failure.onFail === 'retry') {
    const content = `Your last answer was not shown: the guardrail "${failure.guardrail.name}" refused it (${failure.reason}). Answer again so that it passes.`
    turn.guards.retry(failure.guardrail, { id: `msg_${randomUUID()}`, role: 'user', content })
    return 'retry'
  }
  const message = { id: response.messageId, content: response.text }
  return await storeBatch(turn, [guardrailMessageInterrupt('output', message, failure, expiryDefaults(turn))])
}

/** The `input` guardrails of the user message that started this run; a failure pauses before any model call. */
export async function* guardInput(turn: Turn): AsyncGenerator<AgUiEvent, Step | undefined, undefined> {
  const list = turn.deps.agent.guardrails.input
  const last = turn.lastMessage()
  if (list.length === 0 || last?.role !== 'user') return undefined
  const content = messageText(last)
  const failure = yield* runChecks(list, content, context(turn), { messageId: last.id }, turn.deps.logError)
  if (failure === undefined) return undefined
  const message = { id: last.id, content }
  return await storeBatch(turn, [guardrailMessageInterrupt('input', message, failure, expiryDefaults(turn))])
}
