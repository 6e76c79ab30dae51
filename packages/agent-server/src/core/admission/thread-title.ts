import type { Message } from '@interlude/protocol'

/** The most characters of a thread title (docs/protocol.md, `ThreadSummary.title`). */
export const MAX_TITLE_LENGTH = 80

/**
 * A thread's title: its first user message as text, trimmed, cut to 80 characters (an ellipsis marks the cut).
 * Stored once, when the first input creates the thread, so the inboxes never read a history to show it.
 */
export function threadTitle(messages: readonly Message[]): string | undefined {
  const first = messages.find((m) => m.role === 'user')
  if (!first) return undefined
  const content = (first as { content: unknown }).content
  const text =
    typeof content === 'string'
      ? content
      : Array.isArray(content)
        ? content.map((p: { text?: unknown }) => (typeof p.text === 'string' ? p.text : '')).join(' ')
        : ''
  const trimmed = text.trim()
  if (trimmed.length === 0) return undefined
  return trimmed.length > MAX_TITLE_LENGTH ? `${trimmed.slice(0, MAX_TITLE_LENGTH - 1)}…` : trimmed
}
