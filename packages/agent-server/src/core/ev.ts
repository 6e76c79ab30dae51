import { randomUUID } from 'node:crypto'
import { DECISION_EVENT_NAME, EventType, InterludeError } from '@interlude/protocol'
import type {
  AgUiEvent,
  DecisionRecord,
  ErrorCode,
  Interrupt,
  Message,
  RunFinishedOutcome,
  ToolMessage,
} from '@interlude/protocol'
import type { NewEvent } from '../store/store.ts'
import { resultText } from './strict-json.ts'
import { clientThreadId, withClientThreadId } from '../store/thread-key.ts'
import type { ThreadKey } from '../store/thread-key.ts'

/** Small constructors so the execution core reads as a sequence of protocol events. */
export const ev = {
  // Events name the client's thread id, never the owner's key (src/store/thread-key.ts).
  runStarted: (key: ThreadKey, runId: string): AgUiEvent => ({
    type: EventType.RUN_STARTED,
    threadId: clientThreadId(key),
    runId,
  }),
  runFinished: (key: ThreadKey, runId: string, outcome: RunFinishedOutcome): AgUiEvent => ({
    type: EventType.RUN_FINISHED,
    threadId: clientThreadId(key),
    runId,
    outcome,
  }),
  /** `details` (typed, never upstream text): `MODEL_ERROR` and `USAGE_LIMIT_EXCEEDED` (docs/protocol.md#model-errors). */
  runError: (code: ErrorCode, message: string, details?: unknown): AgUiEvent =>
    (details === undefined
      ? { type: EventType.RUN_ERROR, message, code }
      : { type: EventType.RUN_ERROR, message, code, details }) as AgUiEvent,
  textStart: (messageId: string): AgUiEvent => ({ type: EventType.TEXT_MESSAGE_START, messageId, role: 'assistant' }),
  textContent: (messageId: string, delta: string): AgUiEvent => ({
    type: EventType.TEXT_MESSAGE_CONTENT,
    messageId,
    delta,
  }),
  textEnd: (messageId: string): AgUiEvent => ({ type: EventType.TEXT_MESSAGE_END, messageId }),
  toolStart: (toolCallId: string, toolCallName: string, parentMessageId: string): AgUiEvent => ({
    type: EventType.TOOL_CALL_START,
    toolCallId,
    toolCallName,
    parentMessageId,
  }),
  toolArgs: (toolCallId: string, delta: string): AgUiEvent => ({ type: EventType.TOOL_CALL_ARGS, toolCallId, delta }),
  toolEnd: (toolCallId: string): AgUiEvent => ({ type: EventType.TOOL_CALL_END, toolCallId }),
  toolResult: (messageId: string, toolCallId: string, content: string): AgUiEvent => ({
    type: EventType.TOOL_CALL_RESULT,
    messageId,
    toolCallId,
    content,
    role: 'tool',
  }),
  stateSnapshot: (snapshot: unknown): AgUiEvent => ({ type: EventType.STATE_SNAPSHOT, snapshot }),
  messagesSnapshot: (messages: readonly Message[]): AgUiEvent => ({
    type: EventType.MESSAGES_SNAPSHOT,
    messages: [...messages],
  }),
  /** Who decided the batch a resumed run carries out (docs/approvals.md#decision-records). */
  decision: (record: DecisionRecord): AgUiEvent => ({
    type: EventType.CUSTOM,
    name: DECISION_EVENT_NAME,
    value: withClientThreadId(record),
  }),
}

export type InterruptOutcome = { readonly type: 'interrupt'; readonly interrupts: Interrupt[] }

export function isTerminal(type: string): boolean {
  return type === EventType.RUN_FINISHED || type === EventType.RUN_ERROR
}

/**
 * The message a client may see for an error: an `InterludeError` keeps its own (it was written for
 * clients); anything else gets the generic fallback, never the raw exception text.
 */
export function publicMessage(error: unknown, fallback: string): string {
  return InterludeError.isInstance(error) ? error.message : fallback
}

/** An event as a log row (the store keeps its JSON as written). */
export function toNewEvent(event: AgUiEvent): NewEvent {
  return { type: event.type, json: JSON.stringify(event) }
}

/**
 * A settled call's result, shared by the turn and recovery: the text the model reads, the tool
 * message that carries it into history and its `TOOL_CALL_RESULT`. Throws `NotJsonError` for a
 * value JSON cannot hold.
 */
export function toolResult(
  toolCallId: string,
  value: unknown,
): { readonly content: string; readonly message: ToolMessage; readonly event: AgUiEvent } {
  const content = resultText(value)
  const message: ToolMessage = { id: `msg_${randomUUID()}`, role: 'tool', toolCallId, content }
  return { content, message, event: ev.toolResult(message.id, toolCallId, content) }
}
