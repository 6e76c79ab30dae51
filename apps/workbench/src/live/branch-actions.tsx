import type { BranchPoint, ChatBranches } from '@interlude/react'
import { useState } from 'react'

/** What the branch controls of one message need from the live view. */
export interface BranchActionsProps {
  readonly message: { readonly id: string; readonly role: string; readonly text: string }
  readonly branches: ChatBranches | undefined
  /** Nothing can be forked or switched now (a run, a pending batch, a restore). */
  readonly disabled: boolean
  /** Only switching is allowed (a pending batch stays its thread's). */
  readonly switchDisabled: boolean
  readonly onEdit: (messageId: string, text: string) => void
  readonly onRegenerate: (messageId: string) => void
  readonly onSwitch: (threadId: string) => void
}

/** The switcher of the fork point at this message, if any (`useChat().branches`, docs/react-runtime.md#branches). */
function pointAt(branches: ChatBranches | undefined, messageId: string): BranchPoint | undefined {
  return branches?.points.find((p) => 'messageId' in p.at && p.at.messageId === messageId)
}

/**
 * Time travel in the live chat: **Edit** on a user message (`editMessage`: a fork with the new text, answered there),
 * **Regenerate** on an answer (`regenerate`: a fork at its question, answered again) and, on a message where versions
 * part, "‹ 2 / 3 ›" (`switchBranch`). The thread shown is never written by any of them.
 */
export function BranchActions(props: BranchActionsProps) {
  const { message, disabled } = props
  const [editing, setEditing] = useState<string | undefined>()
  const point = pointAt(props.branches, message.id)
  if (editing !== undefined)
    return (
      <form
        className="branch-edit"
        aria-label="Edit message"
        onSubmit={(event) => {
          event.preventDefault()
          if (editing.trim() === '') return
          props.onEdit(message.id, editing.trim())
          setEditing(undefined)
        }}
      >
        <textarea aria-label="New text of the message" value={editing} onChange={(e) => setEditing(e.target.value)} />
        <button type="submit" className="primary" disabled={disabled || editing.trim() === ''}>
          Send edited message
        </button>
        <button type="button" onClick={() => setEditing(undefined)}>
          Cancel edit
        </button>
      </form>
    )
  const go = (index: number) => {
    const threadId = point?.threadIds[index]
    if (threadId !== undefined) props.onSwitch(threadId)
  }
  return (
    <div className="branch-actions">
      {message.role === 'user' && (
        <button type="button" disabled={disabled} onClick={() => setEditing(message.text)}>
          Edit
        </button>
      )}
      {message.role === 'assistant' && (
        <button type="button" disabled={disabled} onClick={() => props.onRegenerate(message.id)}>
          Regenerate
        </button>
      )}
      {point !== undefined && (
        <nav className="branch-switcher" aria-label="Versions">
          <button
            type="button"
            aria-label="Previous version"
            disabled={props.switchDisabled || point.index === 0}
            onClick={() => go(point.index - 1)}
          >
            ‹
          </button>
          <span data-testid="branch-position">
            {point.index + 1} / {point.threadIds.length}
          </span>
          <button
            type="button"
            aria-label="Next version"
            disabled={props.switchDisabled || point.index === point.threadIds.length - 1}
            onClick={() => go(point.index + 1)}
          >
            ›
          </button>
        </nav>
      )}
    </div>
  )
}
