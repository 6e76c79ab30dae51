import { randomUUID } from 'node:crypto'
import type { ModelChunk } from '../../models/model.ts'
import { clientThreadId } from '../../store/thread-key.ts'
import { assistantMessage, modelTools } from './model-events.ts'
import type { ModelEventsOptions, ModelResponse } from './model-events.ts'
import { sized } from './model-window.ts'
import type { Turn } from './turn-state.ts'
import { checkUsageCaps } from './usage.ts'

/**
 * The model step: the next model call — the provider's stream over the history window, and how `modelEvents` names
 * its events. The loop translates the stream itself (one generator less per event on the hot path).
 */
export function callModel(turn: Turn): {
  readonly stream: AsyncIterable<ModelChunk>
  readonly options: ModelEventsOptions
} {
  const { agent, signal } = turn.deps
  // A full thread ends here, before a model call whose answer could not be stored.
  turn.checkCap(1, 1)
  turn.guards.iterations.used++
  const request = {
    systemPrompt: agent.definition.systemPrompt,
    // A guardrail's retry note is read by this call only (docs/guardrails.md#retry).
    messages: [...turn.modelMessages(), ...turn.guards.takeNotes()],
    tools: modelTools(agent, turn.plan.clientTools),
    context: turn.plan.context,
    state: turn.state,
    signal,
  }
  const stream = accounted(turn, () => agent.model.stream(request))
  const options: ModelEventsOptions = {
    messageId: `msg_${randomUUID()}`,
    signal,
    isTaken: (id) => turn.isTakenCallId(id),
  }
  return { stream, options }
}

/**
 * The provider's stream behind the token caps (checked before the call) and with its usage recorded on the run as it
 * arrives (docs/protocol.md#token-usage).
 */
async function* accounted(turn: Turn, open: () => AsyncIterable<ModelChunk>): AsyncGenerator<ModelChunk> {
  const { store, usage: options, agent, logError } = turn.deps
  const { threadId, runId, principal } = turn.plan
  await checkUsageCaps(store, { threadId, principal }, options)
  for await (const chunk of open()) {
    if (chunk.type === 'usage') {
      turn.guards.tokens.used += chunk.usage.totalTokens
      await turn.writes.addUsage(chunk.usage)
      try {
        options?.onUsage?.({
          threadId: clientThreadId(threadId),
          runId,
          principal,
          model: agent.model.name,
          usage: chunk.usage,
        })
      } catch (error) {
        logError('onUsage threw', error)
      }
    }
    yield chunk
  }
}

/** A text-only answer joins the history (a response's calls are recorded by the tool step). */
export async function recordAnswer(turn: Turn, response: ModelResponse): Promise<void> {
  if (response.calls.length > 0 || response.text.length === 0) return
  const message = assistantMessage(response)
  const { bytes } = sized(message)
  turn.checkCap(1, bytes)
  await turn.appendMessage(message, bytes)
}
