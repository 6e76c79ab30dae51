import { InterludeError } from '@interlude/protocol'
import type { Message } from '@interlude/protocol'
import type { Limits } from '../../config/limits.ts'

/** The bounds of what one run reads and writes of its thread's history (docs/decisions.md#bounded-histories, docs/protocol.md#limits). */
export type HistoryLimits = Pick<
  Limits,
  'threadMaxMessages' | 'threadMaxBytes' | 'modelWindowMessages' | 'modelWindowBytes' | 'pauseSnapshotMaxBytes'
>

/** A message of the history with its size as stored JSON. */
export interface SizedMessage {
  readonly message: Message
  readonly bytes: number
}

export function sized(message: Message): SizedMessage {
  return { message, bytes: Buffer.byteLength(JSON.stringify(message), 'utf8') }
}

/** Id of the note that stands in for omitted messages (never stored, only sent to the model). */
export const OMITTED_NOTE_ID = 'interlude-window-note'

/**
 * The model window (docs/protocol.md#the-model-window), a pure function of the newest messages:
 *
 * 1. From the newest message backwards, at most `maxMessages` messages and `maxBytes` bytes.
 * 2. The window never starts inside a tool round: leading `tool` messages (whose assistant `tool_calls` message fell
 *    outside) are dropped, so every call the model sees is followed by its results and every result by its call.
 * 3. When anything older was left out, the model gets the thread's first user message (the task) if it takes at most
 *    a quarter of `maxBytes` (that quarter is then taken from the newest messages' share), and a system note saying
 *    how many messages are omitted, before the window.
 *
 * `newest` are the newest messages in order (a bounded page from the store plus what the run appended);
 * `before` is how many older messages the thread holds besides them. A window that keeps no message at all (the newest
 * message, or the results of the newest tool round, alone exceed the bound) is `THREAD_TOO_LARGE`: a typed end of the
 * run, never a request the model would refuse; the next shorter message continues the thread.
 */
export function modelWindow(
  newest: readonly SizedMessage[],
  before: number,
  firstUser: SizedMessage | undefined,
  bounds: { readonly maxMessages: number; readonly maxBytes: number },
): Message[] {
  // With nothing older unloaded, the first user message is among `newest`.
  const first = firstUser ?? (before === 0 ? newest.find((m) => m.message.role === 'user') : undefined)
  let start = windowStart(newest, bounds.maxMessages, bounds.maxBytes)
  // The first user message, when outside, takes at most a quarter of the bytes from the newest messages' share.
  const outside = (from: number) =>
    first !== undefined && !newest.slice(from).some((m) => m.message.id === first.message.id)
  let keepFirst = first !== undefined && before + start > 0 && outside(start) && first.bytes <= bounds.maxBytes / 4
  if (keepFirst) {
    const reduced = windowStart(newest, bounds.maxMessages, bounds.maxBytes - first!.bytes)
    // Never at the cost of the whole window.
    if (reduced < newest.length) start = Math.max(start, reduced)
    else keepFirst = false
  }
  if (start === newest.length && newest.length > 0) {
    throw new InterludeError(
      'THREAD_TOO_LARGE',
      'The newest messages of this thread do not fit the model window; send a shorter message or start a new thread.',
      { details: { modelWindowMessages: bounds.maxMessages, modelWindowBytes: bounds.maxBytes } },
    )
  }
  const window = newest.slice(start).map((m) => m.message)
  const omitted = before + start
  if (omitted === 0) return window
  const head: Message[] = []
  if (keepFirst) head.push(first!.message)
  const dropped = omitted - head.length
  if (dropped > 0) {
    head.push({
      id: OMITTED_NOTE_ID,
      role: 'system',
      content: `${dropped} earlier message${dropped === 1 ? ' of this conversation is' : 's of this conversation are'} omitted here.`,
    })
  }
  return [...head, ...window]
}

/** Index of the window's first message: newest first within both bounds, never at a `tool` message. */
function windowStart(newest: readonly SizedMessage[], maxMessages: number, maxBytes: number): number {
  let start = newest.length
  let bytes = 0
  while (start > 0 && newest.length - start < maxMessages) {
    const next = newest[start - 1]!
    if (bytes + next.bytes > maxBytes) break
    bytes += next.bytes
    start -= 1
  }
  while (start < newest.length && newest[start]!.message.role === 'tool') start += 1
  return start
}
