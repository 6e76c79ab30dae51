import type { AwaitingExternalCall, Message } from '@interlude/protocol'
import type { BrowserTool } from './types.ts'

const NONE: readonly AwaitingExternalCall[] = Object.freeze([])

/**
 * Calls a finished run left waiting for another system (docs/client-contract.md#external-calls): its
 * `pendingToolCallIds` that are not this client's browser tools. What an earlier snapshot said of them (`resultFrom`)
 * is kept; an answered call is gone. Keeps `previous`'s identity when nothing changed.
 */
export function awaitingExternalCalls(
  tools: readonly BrowserTool[],
  messages: readonly Message[],
  pendingIds: readonly string[] | undefined,
  previous: readonly AwaitingExternalCall[],
): readonly AwaitingExternalCall[] {
  if (!pendingIds?.length) return previous.length === 0 ? previous : NONE
  const browser = new Set(tools.map((t) => t.name))
  const names = new Map<string, string>()
  for (const m of messages)
    if (m.role === 'assistant') for (const c of m.toolCalls ?? []) names.set(c.id, c.function.name)
  const known = new Map(previous.map((c) => [c.toolCallId, c] as const))
  const next: AwaitingExternalCall[] = []
  for (const id of pendingIds) {
    const toolName = names.get(id)
    if (toolName === undefined || browser.has(toolName)) continue
    next.push(known.get(id) ?? Object.freeze({ toolCallId: id, toolName }))
  }
  if (next.length === previous.length && next.every((c, i) => c === previous[i])) return previous
  return next.length === 0 ? NONE : Object.freeze(next)
}

/** The snapshot's list, frozen (absent: none). */
export function restoredAwaiting(list: readonly AwaitingExternalCall[] | undefined): readonly AwaitingExternalCall[] {
  if (!list?.length) return NONE
  return Object.freeze(
    list.map((c) => Object.freeze({ ...c, ...(c.resultFrom ? { resultFrom: Object.freeze([...c.resultFrom]) } : {}) })),
  )
}

export { NONE as NO_AWAITING_EXTERNAL }
