import { InterludeError, errorFromFetch, messageText } from '@interlude/protocol'
import type { Message } from '@interlude/protocol'
import { useState } from 'react'
import type { Json } from '../recording/recording-types.ts'
import type { InspectorView } from '../replay/replay-index.ts'
import type { ForkBody, ForkCreated, HistoryClient } from './history-client.ts'
import { messageIdOf } from './log-recording.ts'

export interface ForkActionsProps {
  readonly client: HistoryClient
  /** The stored thread being replayed (the fork's parent). */
  readonly threadId: string
  readonly view: InspectorView
  /** A fork was made: the app opens it in the live view. */
  readonly onForked: (fork: ForkCreated) => void
}

/**
 * "Fork here" and "What if…" on the selected frame of a stored thread (apps/workbench/README.md#time-travel). A fork is a new thread
 * of this principal: nothing of the replayed thread changes, and no effect runs again. "Fork here" starts after the
 * last message the frame shows; "What if…" starts paused at the frame's batch, the same question with new interrupt
 * ids, to answer it differently.
 */
export function ForkActions({ client, threadId, view, onForked }: ForkActionsProps) {
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string | undefined>()
  const messages = view.snapshot?.messages ?? []
  const message = lastWithId(messages)
  const batch = view.batch

  const fork = (body: ForkBody) => {
    setBusy(true)
    setError(undefined)
    client
      .fork(threadId, body)
      .then((created) => {
        setBusy(false)
        onForked(created)
      })
      .catch((reason: unknown) => {
        const failure = InterludeError.isInstance(reason) ? reason : errorFromFetch(reason)
        setBusy(false)
        setError(`${failure.code}: ${failure.message}`)
      })
  }

  return (
    <div className="fork-actions">
      {message ? (
        <button
          type="button"
          disabled={busy}
          onClick={() => fork({ at: { messageId: message.id } })}
          title="A new thread with this thread's history up to and including this message; nothing runs again"
        >
          Fork here
        </button>
      ) : (
        <button type="button" disabled title="No message at this frame yet">
          Fork here
        </button>
      )}
      {message && (
        <span className="muted fork-at">
          after the {message.role} message “{snippet(message.text)}”
        </span>
      )}
      {batch && (
        <button
          type="button"
          disabled={busy}
          onClick={() => fork({ at: { batchId: batch.id } })}
          title="A new thread paused at this same question, to answer it differently; this thread does not change"
        >
          What if…
        </button>
      )}
      {batch && (
        <span className="muted fork-at">
          answer the {view.batchState === 'pending' ? 'waiting' : 'answered'} batch <code>{batch.id.slice(0, 12)}</code>{' '}
          again in a fork
        </span>
      )}
      {busy && <span role="status">Forking…</span>}
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
    </div>
  )
}

interface FrameMessage {
  readonly id: string
  readonly role: string
  readonly text: string
}

function lastWithId(messages: readonly Json[]): FrameMessage | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]!
    const id = messageIdOf(message)
    const m = message as unknown as Message
    if (id === undefined) continue
    const tools = (m as { toolCalls?: readonly { function?: { name?: string } }[] }).toolCalls
    const text = messageText(m) || (tools?.length ? `calls ${tools.map((t) => t.function?.name).join(', ')}` : '')
    return { id, role: m.role, text }
  }
  return undefined
}

function snippet(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim()
  return flat.length > 60 ? `${flat.slice(0, 59)}…` : flat
}
