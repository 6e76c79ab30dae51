import type { AgUiEvent, JsonPatch, Message } from '@interlude/protocol'
import { applyPatch } from './json-patch.ts'
import type { AnyMessage } from './message-draft.ts'
import { Draft } from './message-draft.ts'

/**
 * Applies a batch of streamed AG-UI events to `(messages, state)` without mutating either.
 *
 * Cost is linear in the batch, not in the history: the message list is copied at most once per
 * batch, each touched message is cloned once, and text/argument deltas are collected as chunks and
 * joined once when the batch is materialised. Messages the batch does not touch keep their
 * identity, so `React.memo` rows do not re-render. Assembly is idempotent by id (a replayed
 * `TEXT_MESSAGE_START` restarts that message), so replays over a snapshot converge.
 */

export interface AssemblyResult {
  readonly messages: readonly Message[]
  readonly state: unknown
  /** Set when an event could not be applied (e.g. a JSON Patch that does not fit the state). */
  readonly fault: string | undefined
}

/** Applies one batch in order; lifecycle, step and unknown events change nothing here. */
export function applyEvents(
  messages: readonly Message[],
  state: unknown,
  events: readonly AgUiEvent[],
): AssemblyResult {
  const d = new Draft(messages, state)
  for (const ev of events) {
    const e = ev as unknown as Record<string, unknown>
    switch (ev.type) {
      case 'TEXT_MESSAGE_START':
        d.startText(e.messageId as string, typeof e.role === 'string' ? e.role : 'assistant', e.name)
        break
      case 'TEXT_MESSAGE_CONTENT':
        d.appendText(e.messageId as string, e.delta as string)
        break
      case 'TEXT_MESSAGE_CHUNK':
        d.chunkMessage(e, 'assistant')
        break
      case 'REASONING_MESSAGE_START':
        d.startText(e.messageId as string, 'reasoning', undefined)
        break
      case 'REASONING_MESSAGE_CONTENT':
        if (typeof e.delta === 'string') d.appendText(e.messageId as string, e.delta, 'reasoning')
        break
      case 'REASONING_MESSAGE_CHUNK':
        d.chunkMessage(e, 'reasoning')
        break
      case 'TOOL_CALL_START':
        d.startToolCall(e.toolCallId as string, e.toolCallName as string, e.parentMessageId)
        break
      case 'TOOL_CALL_ARGS':
        d.appendArgs(e.toolCallId as string, e.delta as string)
        break
      case 'TOOL_CALL_CHUNK':
        d.chunkToolCall(e)
        break
      case 'TOOL_CALL_RESULT':
        d.toolResult(e.messageId as string, e.toolCallId as string, e.content)
        break
      case 'STATE_SNAPSHOT':
        d.state = e.snapshot
        break
      case 'STATE_DELTA':
        try {
          // Only the containers along each path are copied (structural sharing).
          d.state = applyPatch(d.state, e.delta as JsonPatch)
        } catch (error) {
          d.fault ??= `STATE_DELTA does not apply: ${String(error)}`
        }
        break
      case 'MESSAGES_SNAPSHOT':
        d.replaceAll(e.messages as readonly AnyMessage[])
        break
      case 'ACTIVITY_SNAPSHOT':
        d.activity(e.messageId as string, e.activityType as string, e.content, e.replace !== false)
        break
      case 'ACTIVITY_DELTA':
        d.activityDelta(e.messageId as string, e.patch as JsonPatch)
        break
      default:
        // Lifecycle, steps, RAW, CUSTOM and unknown types do not change messages or state.
        break
    }
  }
  return { messages: d.result(), state: d.state, fault: d.fault }
}
