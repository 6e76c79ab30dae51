import type { AgUiEvent, BudgetKind, GuardrailAnswer, GuardrailMetadata } from '@interlude/protocol'
import type { StoredInterrupt } from '../../store/store.ts'
import { ev } from '../ev.ts'
import { guardrailEvent } from '../guardrails/guardrail-checks.ts'
import type { BudgetCounts } from '../guardrails/guardrail-interrupts.ts'
import type { ResumeRunPlan } from '../run-plan.ts'
import { exhaustedNote } from './budget-step.ts'
import { endWithNote } from './closing-note.ts'
import { sized } from './model-window.ts'
import type { Turn } from './turn-state.ts'

/**
 * Decisions on interrupts that belong to the turn, not to a call (docs/guardrails.md): a withheld answer or a user
 * message a guardrail stopped, and a reached budget. Such an interrupt is alone in its batch. `'ended'`: the run
 * finished here; `'continue'`: the model loop goes on; `undefined`: the batch is about calls (the resume step's).
 */
export async function* applyTurnDecision(
  turn: Turn,
  plan: ResumeRunPlan,
): AsyncGenerator<AgUiEvent, 'ended' | 'continue' | undefined, undefined> {
  const item = plan.batch.interrupts.length === 1 ? plan.batch.interrupts[0]! : undefined
  if (item === undefined) return undefined
  const entry = plan.decision.find((e) => e.interruptId === item.interrupt.id)
  const payload = entry?.status === 'resolved' ? entry.payload : undefined
  if (item.kind === 'budget') {
    const metadata = item.interrupt.metadata as { kind: BudgetKind; limit: number; counts: BudgetCounts }
    const counts = metadata.counts
    const extend = (payload as { extend?: number } | undefined)?.extend
    turn.guards.restore(counts)
    if (extend === undefined) {
      // Denied (cancelled, or expired): a finished run with its reason, never a bare failure.
      yield* endWithNote(turn, exhaustedNote(metadata.kind, turn), 'budget_exhausted')
      return 'ended'
    }
    const limit = metadata.limit + extend
    turn.guards.restore({ ...counts, [metadata.kind]: { ...counts[metadata.kind], limit } })
    return 'continue'
  }
  if (item.kind !== 'guardrail') return undefined
  const metadata = item.interrupt.metadata as unknown as GuardrailMetadata
  if (metadata.on === 'args') return undefined
  return yield* messageDecision(turn, item, metadata, payload as GuardrailAnswer | undefined)
}

async function* messageDecision(
  turn: Turn,
  item: StoredInterrupt,
  metadata: GuardrailMetadata,
  answer: GuardrailAnswer | undefined,
): AsyncGenerator<AgUiEvent, 'ended' | 'continue', undefined> {
  const action = answer?.action === 'allow' ? 'allow' : 'block'
  const { guardrail: name, on, reason } = metadata
  const messageId = metadata.messageId ?? item.toolCallId
  yield guardrailEvent({ name, on, pass: false, reason, action, messageId })
  if (action === 'allow' && on === 'input') return 'continue'
  if (action === 'allow') {
    // The withheld answer joins the history as it was streamed, under its own id.
    const message = { id: messageId, role: 'assistant' as const, content: metadata.content ?? '' }
    const { bytes } = sized(message)
    turn.checkCap(1, bytes)
    await turn.appendMessage(message, bytes)
    // Streamed again under its id: a client whose pause snapshot dropped it (or that reloaded) shows it as history.
    yield ev.textStart(messageId)
    yield ev.textContent(messageId, message.content)
    yield ev.textEnd(messageId)
    yield ev.runFinished(turn.plan.threadId, turn.plan.runId, { type: 'success' })
    return 'ended'
  }
  const why = answer?.note !== undefined && answer.note.length > 0 ? ` Note: ${answer.note}` : ''
  const text =
    on === 'output'
      ? `The answer was withheld: the guardrail "${name}" blocked it (${reason}).${why}`
      : `Your message was not passed on: the guardrail "${name}" blocked it (${reason}).${why}`
  yield* endWithNote(turn, text, 'guardrail_blocked')
  return 'ended'
}
