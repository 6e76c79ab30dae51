import type { WithheldMessage } from '@interlude/protocol'
import type { SubagentActivities, SubagentActivity } from '@interlude/react'
import { InlineApproval, subagentsByToolCall } from '@interlude/react'
import { Fragment } from 'react'
import type { ReactNode } from 'react'
import { SubagentActivityView } from './subagent-activity.tsx'

/**
 * Renders AG-UI messages (live from `useChat`, or from a recorded snapshot in replay): user and
 * assistant text, and each tool call with its arguments, its approval state and its result.
 * Everything is rendered as text.
 */

interface ToolCallLike {
  readonly id: string
  readonly function?: { readonly name?: string; readonly arguments?: string }
}

interface MessageLike {
  readonly id?: string
  readonly role?: string
  readonly content?: unknown
  readonly toolCalls?: readonly ToolCallLike[]
  readonly toolCallId?: string
  readonly error?: string
}

export interface MessageListProps {
  readonly messages: readonly unknown[]
  /** toolCallIds of the pending batch (shown as "awaiting approval"). */
  readonly awaitingToolCallIds?: ReadonlySet<string>
  /**
   * Tools whose pending approval is answered at the call (`<InlineApproval>`, under the live view's
   * `InterruptFormProvider`); outside a provider (replay) nothing is shown.
   */
  readonly inlineTools?: ReadonlySet<string> | undefined
  /** True while a run is streaming (tool calls without a result are "running"). */
  readonly busy?: boolean
  /** `useChat().subagents`: each shown (collapsed) under the tool call that runs it. */
  readonly subagents?: SubagentActivities
  /**
   * `useChat().withheld`: answers a failed output guardrail holds back until its question is decided
   * (docs/guardrails.md#withheld-answers), shown marked as withheld with the guardrail's reason.
   */
  readonly withheld?: readonly WithheldMessage[]
  /** Controls under a user or assistant message (the live chat's edit, regenerate and version switcher). */
  readonly actions?: (message: { readonly id: string; readonly role: string; readonly text: string }) => ReactNode
}

function isMessageLike(value: unknown): value is MessageLike {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

export function textOf(content: unknown): string {
  if (typeof content === 'string') return content
  if (Array.isArray(content)) {
    return content
      .map((part: unknown) =>
        typeof part === 'object' && part !== null && typeof (part as { text?: unknown }).text === 'string'
          ? (part as { text: string }).text
          : '',
      )
      .join('')
  }
  return content === undefined || content === null ? '' : JSON.stringify(content)
}

function prettyArgs(text: string | undefined): string {
  if (text === undefined || text === '') return '{}'
  try {
    return JSON.stringify(JSON.parse(text), null, 2)
  } catch {
    return text // still streaming, or not JSON: shown as it arrived
  }
}

export type ToolResultState = 'denied' | 'cancelled' | 'unknown' | 'failed' | 'done'

/**
 * What a tool result says happened. Cancelled (nothing ran, no answer) is not "denied" (a person said no), and an
 * effect whose outcome is unknown (the process died while it ran: `{ status: "unknown" }`) is not "failed": it may
 * well have happened, so it is shown as unknown until somebody checks.
 */
export function resultState(result: MessageLike | undefined): ToolResultState | undefined {
  if (result === undefined) return undefined
  const text = textOf(result.content)
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    value = undefined
  }
  if (typeof value === 'object' && value !== null) {
    const record = value as Record<string, unknown>
    if (record.status === 'unknown') return 'unknown'
    if (record.status === 'cancelled') return 'cancelled'
    if (record.denied === true || record.approved === false || record.status === 'denied') return 'denied'
    if (typeof result.error === 'string' || typeof record.error === 'string' || record.status === 'failed')
      return 'failed'
    return 'done'
  }
  if (typeof result.error === 'string') return 'failed'
  if (/\b(cancelled|canceled)\b/i.test(text)) return 'cancelled'
  if (/\bdenied\b/i.test(text)) return 'denied'
  return 'done'
}

const NO_SUBAGENTS: SubagentActivities = {}
const NO_WITHHELD: readonly WithheldMessage[] = []

export function MessageList({
  messages,
  awaitingToolCallIds,
  inlineTools,
  busy = false,
  subagents = NO_SUBAGENTS,
  withheld = NO_WITHHELD,
  actions,
}: MessageListProps) {
  const list = messages.filter(isMessageLike)
  const held = new Map(withheld.map((w) => [w.messageId, w]))
  const byCall = subagentsByToolCall(subagents)
  const shownCalls = new Set(list.flatMap((m) => (m.toolCalls ?? []).map((c) => c.id)))
  // A subagent whose parent call is not (yet) in the history is still shown, after the conversation.
  const orphans: SubagentActivity[] = Object.values(subagents).filter(
    (s) => s.parentToolCallId === undefined || !shownCalls.has(s.parentToolCallId),
  )
  const results = new Map<string, MessageLike>()
  for (const message of list) {
    if (message.role === 'tool' && typeof message.toolCallId === 'string') results.set(message.toolCallId, message)
  }
  if (list.length === 0) return <p className="empty">No messages yet. Try “deploy v2.1 to production”.</p>
  return (
    <ol className="messages" aria-label="Conversation">
      {list.map((message, index) => {
        if (message.role === 'tool') return null
        const key = message.id ?? `m${index}`
        const text = textOf(message.content)
        const withheldBy = message.id === undefined ? undefined : held.get(message.id)
        return (
          <Fragment key={key}>
            {(text !== '' || message.role !== 'assistant') && (
              <li
                className={`message message-${message.role ?? 'unknown'}${withheldBy ? ' message-withheld' : ''}`}
                data-role={message.role}
                data-withheld={withheldBy ? 'true' : undefined}
              >
                <span className="message-role">
                  {message.role === 'user' ? 'You' : message.role === 'assistant' ? 'Assistant' : message.role}
                  {withheldBy && ' · withheld'}
                </span>
                {withheldBy && (
                  <p className="withheld-note" role="note">
                    Withheld by the guardrail “{withheldBy.guardrail}”: {withheldBy.reason}. It joins the conversation
                    only if the question below allows it.
                  </p>
                )}
                <p className="message-text">{text}</p>
                {actions !== undefined &&
                  message.id !== undefined &&
                  actions({ id: message.id, role: message.role ?? '', text })}
              </li>
            )}
            {(message.toolCalls ?? []).map((call) => {
              const result = results.get(call.id)
              const state = awaitingToolCallIds?.has(call.id)
                ? 'awaiting'
                : (resultState(result) ?? (busy ? 'running' : 'pending'))
              return (
                <li key={call.id} className={`tool-call tool-${state}`} data-tool-call-id={call.id} data-state={state}>
                  <div className="tool-head">
                    <span className="tool-name">{call.function?.name ?? 'tool'}</span>
                    <span className="tool-state">{TOOL_STATE_LABEL[state]}</span>
                  </div>
                  <pre className="tool-args">{prettyArgs(call.function?.arguments)}</pre>
                  {state === 'awaiting' && inlineTools?.has(call.function?.name ?? '') && (
                    <InlineApproval toolCallId={call.id} />
                  )}
                  {result !== undefined && <pre className="tool-result">{textOf(result.content) || result.error}</pre>}
                  {(byCall.get(call.id) ?? []).map((activity) => (
                    <SubagentActivityView key={activity.subagentRunId} activity={activity} />
                  ))}
                </li>
              )
            })}
          </Fragment>
        )
      })}
      {orphans.map((activity) => (
        <li key={activity.subagentRunId} className="message message-subagent" data-role="subagent">
          <SubagentActivityView activity={activity} />
        </li>
      ))}
    </ol>
  )
}

const TOOL_STATE_LABEL = {
  awaiting: 'awaiting approval',
  running: 'running…',
  pending: 'no result',
  denied: 'denied',
  cancelled: 'cancelled',
  unknown: 'outcome unknown',
  failed: 'failed',
  done: 'done',
} as const
