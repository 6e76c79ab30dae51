import type { AgUiEvent, Message } from '@interlude/protocol'
import { messageText } from '@interlude/protocol'
import { NONE } from './immutable.ts'
import type { QueuedMessage } from './types.ts'

/**
 * The queued messages as pure list operations (docs/react-runtime.md#many-messages-one-thread): every change builds a
 * new frozen list whose positions are its order (1 = starts next), so positions follow starts and cancels by themselves.
 */

function numbered(list: readonly QueuedMessage[]): readonly QueuedMessage[] {
  if (list.length === 0) return NONE
  return Object.freeze(list.map((q, i) => (q.position === i + 1 ? q : Object.freeze({ ...q, position: i + 1 }))))
}

/** A new entry for `message`, answered by the run `runId`. */
export function queuedEntry(runId: string, message: Message): QueuedMessage {
  return Object.freeze({ runId, messageId: message.id, text: messageText(message), position: 0, message })
}

/** Appends an entry, or puts it first (`interrupt` input starts next). */
export function withQueued(
  list: readonly QueuedMessage[],
  entry: QueuedMessage,
  front: boolean,
): readonly QueuedMessage[] {
  return numbered(front ? [entry, ...list] : [...list, entry])
}

/** Removes the entry of `runId` (cancelled, refused, or steered into the running turn). */
export function withoutQueued(list: readonly QueuedMessage[], runId: string): readonly QueuedMessage[] {
  const rest = list.filter((q) => q.runId !== runId)
  return rest.length === list.length ? list : numbered(rest)
}

/**
 * The run `runId` started: its message joins the history (once) and its entry leaves the queue with every entry ahead
 * of it, which can no longer start before it (the server dropped or cancelled them). Other runs change nothing.
 */
export function startQueued(
  list: readonly QueuedMessage[],
  messages: readonly Message[],
  runId: string,
): { readonly queued: readonly QueuedMessage[]; readonly messages: readonly Message[] } {
  const at = list.findIndex((q) => q.runId === runId)
  if (at < 0) return { queued: list, messages }
  const { message } = list[at]!
  const known = messages.some((m) => m.id === message.id)
  return {
    queued: numbered(list.slice(at + 1)),
    messages: known ? messages : Object.freeze([...messages, message]),
  }
}

/** The entries still waiting after a restore: those whose message is not in the restored history yet. */
export function stillQueued(list: readonly QueuedMessage[], messages: readonly Message[]): readonly QueuedMessage[] {
  const known = new Set(messages.map((m) => m.id))
  return numbered(list.filter((q) => !known.has(q.messageId)))
}

/** Appends entries in their order (steers no turn took become queued input, docs/protocol.md#steer). */
export function appended(list: readonly QueuedMessage[], more: readonly QueuedMessage[]): readonly QueuedMessage[] {
  return more.length === 0 ? list : numbered([...list, ...more])
}

/** Without the entries whose message these events wrote (`TEXT_MESSAGE_START { role: 'user' }` under its id: a steer). */
export function withoutWritten(list: readonly QueuedMessage[], events: readonly AgUiEvent[]): readonly QueuedMessage[] {
  if (list.length === 0) return list
  const written = new Set<unknown>()
  for (const e of events) {
    const start = e as { type: string; role?: unknown; messageId?: unknown }
    if (start.type === 'TEXT_MESSAGE_START' && start.role === 'user') written.add(start.messageId)
  }
  const rest = list.filter((q) => !written.has(q.messageId))
  return rest.length === list.length ? list : numbered(rest)
}
