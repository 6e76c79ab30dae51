import { randomUUID } from 'node:crypto'
import { InterludeError } from '@interlude/protocol'
import type { AgUiEvent, AssistantMessage, Tool } from '@interlude/protocol'
import type { ResolvedAgent } from '../../agent/agent.ts'
import type { ModelChunk, ModelTool, ModelUsage } from '../../models/model.ts'
import { ev } from '../ev.ts'
import { RunCancelled } from '../run-cancelled.ts'

/** A tool call as the model streamed it (its argument text grows chunk by chunk). */
export interface ModelCall {
  readonly id: string
  readonly name: string
  argsText: string
}

/** One model response: the assistant message id, its text and its tool calls. */
export interface ModelResponse {
  readonly messageId: string
  readonly text: string
  readonly calls: readonly ModelCall[]
}

/**
 * The assistant message of a response: its text (kept empty only when there are no calls) and its calls — by default
 * as the model wrote them; the tool step passes them with oversized arguments replaced.
 */
export function assistantMessage(
  response: ModelResponse,
  calls: readonly ModelCall[] = response.calls,
): AssistantMessage {
  return {
    id: response.messageId,
    role: 'assistant',
    ...(response.text.length > 0 || calls.length === 0 ? { content: response.text } : {}),
    ...(calls.length > 0
      ? {
          toolCalls: calls.map((c) => ({
            id: c.id,
            type: 'function' as const,
            function: { name: c.name, arguments: c.argsText },
          })),
        }
      : {}),
  }
}

export interface ModelEventsOptions {
  /** The id of the assistant message the text and the calls belong to. */
  readonly messageId: string
  /** Cancel or shutdown: reading stops before the next chunk. */
  readonly signal: AbortSignal
  /** Whether the thread already has a call with this id (a model may repeat or invent ids). */
  readonly isTaken: (toolCallId: string) => boolean
  /** Token counts the provider reported for this call (also when the call then fails: the tokens were spent). */
  readonly onUsage?: (usage: ModelUsage) => void
}

/** What the model is offered: the agent's tools, then the browser tools the client declared (agent names win). */
export function modelTools(agent: ResolvedAgent, clientTools: readonly Tool[]): ModelTool[] {
  const tools: ModelTool[] = [...agent.tools.values()].map((t) => ({
    name: t.name,
    description: t.definition.description,
    parameters: t.parameters,
  }))
  for (const t of clientTools) {
    if (!agent.tools.has(t.name))
      tools.push({
        name: t.name,
        description: t.description,
        parameters: (t.parameters ?? { type: 'object' }) as Record<string, unknown>,
      })
  }
  return tools
}

/** The model's id when it is well-formed and unused on the thread, else a fresh one. */
function callId(proposed: string | undefined, current: readonly ModelCall[], isTaken: (id: string) => boolean): string {
  const valid = proposed !== undefined && /^[\w.:-]{1,128}$/.test(proposed)
  if (valid && !current.some((c) => c.id === proposed) && !isTaken(proposed)) return proposed
  return `call_${randomUUID()}`
}

/**
 * Translates a model stream into AG-UI events (docs/protocol.md): text deltas as one
 * `TEXT_MESSAGE_*` sequence, each tool call as `TOOL_CALL_START` / `_ARGS`, and at the end the
 * `END` of whatever is still open, so the sequence stays valid (also when cancelled or failed mid-stream).
 * Returns the response. A failing stream is `MODEL_ERROR` (its text only goes to the cause; a provider's
 * `InterludeError` is passed through with its details); a
 * cancel is `RunCancelled`. Writes nothing: what the response changes is the turn's business.
 */
export async function* modelEvents(
  stream: AsyncIterable<ModelChunk>,
  options: ModelEventsOptions,
): AsyncGenerator<AgUiEvent, ModelResponse, undefined> {
  const { messageId, signal } = options
  const calls: ModelCall[] = []
  const byKey = new Map<string, ModelCall>()
  let text = ''
  let textOpen = false
  try {
    for await (const chunk of stream) {
      if (chunk.type === 'usage') {
        options.onUsage?.(chunk.usage)
        continue
      }
      if (signal.aborted) break
      if (chunk.type === 'text') {
        if (chunk.delta.length === 0) continue
        if (!textOpen) {
          textOpen = true
          yield ev.textStart(messageId)
        }
        text += chunk.delta
        yield ev.textContent(messageId, chunk.delta)
      } else if (chunk.type === 'tool_call_start') {
        if (textOpen) {
          textOpen = false
          yield ev.textEnd(messageId)
        }
        const call: ModelCall = { id: callId(chunk.id, calls, options.isTaken), name: chunk.name, argsText: '' }
        calls.push(call)
        byKey.set(chunk.key, call)
        yield ev.toolStart(call.id, call.name, messageId)
      } else {
        const call = byKey.get(chunk.key)
        if (!call || chunk.delta.length === 0) continue
        call.argsText += chunk.delta
        yield ev.toolArgs(call.id, chunk.delta)
      }
    }
  } catch (error) {
    // A failed stream closes what is open the way a cancel does, so every START has its END before
    // RUN_ERROR (docs/protocol.md). The calls never ran and are not recorded, as after a cancel.
    if (textOpen) yield ev.textEnd(messageId)
    for (const call of calls) yield ev.toolEnd(call.id)
    if (signal.aborted) throw new RunCancelled()
    // A provider's typed error (model-errors.ts: MODEL_ERROR with details) or a usage cap keeps its
    // code, message and details; anything else is a generic MODEL_ERROR.
    if (InterludeError.isInstance(error)) throw error
    throw new InterludeError('MODEL_ERROR', 'The model request failed.', { cause: error })
  }
  if (textOpen) yield ev.textEnd(messageId)
  for (const call of calls) yield ev.toolEnd(call.id)
  if (signal.aborted) throw new RunCancelled()
  return { messageId, text, calls }
}
