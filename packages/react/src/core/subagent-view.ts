import { messageText } from '@interlude/protocol'
import type { SubagentActivities, SubagentActivity } from './subagent-activity.ts'

/**
 * Reading a subagent's record for display (docs/client-contract.md#subagents). Kept apart from the runtime, so an
 * app that shows no subagents does not bundle it. Every selector is memoized per object: identity-stable per snapshot.
 */

/** One tool call of a subagent, as far as its events told. */
export interface SubagentToolCall {
  readonly toolCallId: string
  readonly toolName: string
  /** The raw argument text (streamed deltas joined). */
  readonly args: string
  /** The result's text, once `TOOL_CALL_RESULT` arrived. */
  readonly result: string | undefined
}

function memo<K extends object, V>(read: (key: K) => V): (key: K) => V {
  const cache = new WeakMap<K, V>()
  return (key) => {
    if (!cache.has(key)) cache.set(key, read(key))
    return cache.get(key)!
  }
}

/** The subagent's assistant text so far, its messages separated by a blank line. */
export const subagentText: (activity: SubagentActivity) => string = memo((activity) =>
  activity.messages
    .filter((m) => m.role === 'assistant')
    .map((m) => messageText(m))
    .filter((text) => text !== '')
    .join('\n\n'),
)

/** The subagent's tool calls in call order, each with its result's text once it arrived. */
export const subagentToolCalls: (activity: SubagentActivity) => readonly SubagentToolCall[] = memo((activity) => {
  const results = new Map<string, string>()
  for (const m of activity.messages) if (m.role === 'tool') results.set(m.toolCallId, messageText(m))
  // Read defensively: a subagent's MESSAGES_SNAPSHOT is installed as sent.
  return activity.messages.flatMap((m) =>
    m.role === 'assistant' && Array.isArray(m.toolCalls)
      ? m.toolCalls.map((call) => ({
          toolCallId: String(call?.id),
          toolName: String(call?.function?.name ?? 'tool'),
          args: String(call?.function?.arguments ?? ''),
          result: results.get(call?.id),
        }))
      : [],
  )
})

/**
 * The subagent runs of each parent tool call (`parentToolCallId` → records in arrival order). Memoized per
 * `subagents` object, so it is identity-stable per snapshot.
 */
export const subagentsByToolCall: (activities: SubagentActivities) => ReadonlyMap<string, readonly SubagentActivity[]> =
  memo((activities) => {
    const map = new Map<string, SubagentActivity[]>()
    for (const activity of Object.values(activities)) {
      if (activity.parentToolCallId === undefined) continue
      map.set(activity.parentToolCallId, [...(map.get(activity.parentToolCallId) ?? []), activity])
    }
    return map
  })
