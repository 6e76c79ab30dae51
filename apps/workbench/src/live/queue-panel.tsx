import type { QueuedMessage } from '@interlude/react'

export interface QueuePanelProps {
  readonly queued: readonly QueuedMessage[]
  readonly onCancel: (runId: string) => void
}

/** Messages waiting for their runs, in the order they start; each can be taken back (`cancelQueued`). */
export function QueuePanel({ queued, onCancel }: QueuePanelProps) {
  if (queued.length === 0) return null
  return (
    <section className="queue" aria-label="Queued messages">
      <h2>Queued</h2>
      <ol>
        {queued.map((q) => (
          <li key={q.runId} data-testid="queued-message" data-position={q.position}>
            <span className="queue-text">
              {q.position}. {q.text}
            </span>
            <button type="button" onClick={() => onCancel(q.runId)} aria-label={`Cancel queued message ${q.position}`}>
              Cancel
            </button>
          </li>
        ))}
      </ol>
    </section>
  )
}
