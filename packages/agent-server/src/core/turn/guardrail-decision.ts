import type { AgUiEvent, GuardrailAnswer, GuardrailMetadata, ResumeEntry } from '@interlude/protocol'
import type { StoredInterrupt, ToolCallRecord } from '../../store/store.ts'
import { guardrailEvent } from '../guardrails/guardrail-checks.ts'
import { classifyCall } from '../tools/tool-verdicts.ts'
import { approvalInterrupt, ruleDecision } from './tool-step.ts'
import { runEffect } from './run-effect.ts'
import type { Turn } from './turn-state.ts'

/**
 * A person's answer to a call's `args` guardrail (docs/guardrails.md): `block` (or a cancelled entry, or the deadline)
 * denies the call with the note; `allow` lets it go on as if the check had passed — its policy is checked again and
 * its approval, if it needs one, is asked now (it joins the next batch); a call that needs none runs, in the model's
 * order, unless an earlier call of the batch asks again first (then it waits for that batch, like a held call).
 */
export async function* applyGuardrailDecision(
  turn: Turn,
  item: StoredInterrupt,
  entry: ResumeEntry,
  record: ToolCallRecord,
): AsyncGenerator<AgUiEvent> {
  const metadata = item.interrupt.metadata as unknown as GuardrailMetadata
  const answer = entry.status === 'resolved' ? (entry.payload as GuardrailAnswer) : undefined
  const action = answer?.action === 'allow' ? 'allow' : 'block'
  const { guardrail: name, reason } = metadata
  yield guardrailEvent({ name, on: 'args', pass: false, reason, action, toolCallId: record.toolCallId })
  if (action === 'block') {
    const note = answer?.note !== undefined && answer.note.length > 0 ? answer.note : undefined
    yield* turn.settle(record, 'denied', {
      status: 'denied',
      reason: note ?? `Blocked by the guardrail "${name}": ${reason}`,
      guardrail: name,
    })
    return
  }
  const call = { id: record.toolCallId, name: record.toolName, argsText: record.argsText }
  const verdict = await classifyCall(call, turn.verdicts)
  switch (verdict.kind) {
    case 'reject':
      yield* turn.settle(record, 'rejected', { status: 'error', error: verdict.error })
      return
    case 'deny':
      yield* turn.settle(record, 'denied', { status: 'denied', reason: verdict.reason })
      return
    case 'interrupt': {
      const asked = yield* approvalInterrupt(turn, verdict.tool, verdict.args, record)
      if (asked) turn.asked.push(asked)
      return
    }
    case 'execute':
    case 'external':
      if (verdict.rule) yield* ruleDecision(turn, verdict.rule, record.toolCallId)
      // An earlier call asks again: this one waits for that batch (it stays undecided and is run as held).
      if (turn.asked.length > 0) return
      yield* runEffect(turn, verdict.tool, record, verdict.args)
      return
    default:
      return
  }
}
