import { randomUUID } from 'node:crypto'
import type { AgUiEvent, AssistantMessage, OutcomeReason } from '@interlude/protocol'
import { ev } from '../ev.ts'
import { sized } from './model-window.ts'
import type { Turn } from './turn-state.ts'

/**
 * The server's own last word on a run that a guardrail or a budget ended (docs/guardrails.md#outcome-reasons): an
 * assistant message in the history — so the model reads it on the next turn — streamed like any text, then
 * `RUN_FINISHED` success with the reason.
 */
export async function* endWithNote(turn: Turn, text: string, reason: OutcomeReason): AsyncGenerator<AgUiEvent> {
  const message: AssistantMessage = { id: `msg_${randomUUID()}`, role: 'assistant', content: text }
  const { bytes } = sized(message)
  turn.checkCap(1, bytes)
  await turn.appendMessage(message, bytes)
  yield ev.textStart(message.id)
  yield ev.textContent(message.id, text)
  yield ev.textEnd(message.id)
  if (turn.takeStateChange()) yield ev.stateSnapshot(turn.state)
  yield ev.runFinished(turn.plan.threadId, turn.plan.runId, { type: 'success', reason } as { type: 'success' })
}
