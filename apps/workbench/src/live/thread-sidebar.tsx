import { JsonView } from '../ui/json-view.tsx'
import type { InboxState } from './use-inbox.ts'

export interface ThreadSidebarProps {
  readonly threadId: string
  /** The shared agent state of the current thread. */
  readonly state: unknown
  readonly inbox: InboxState
  /** A run or a restore is in progress: another thread cannot be opened. */
  readonly busy: boolean
  /** A run is in progress: a new conversation cannot start. */
  readonly loading: boolean
  /** False while the replay is shown. */
  readonly active: boolean
  readonly onNewConversation: () => void
  readonly onSelectThread: (threadId: string) => void
}

/** The live view's side: the current thread, the approval inbox (threads waiting for answers) and the agent state. */
export function ThreadSidebar({
  threadId,
  state,
  inbox,
  busy,
  loading,
  active,
  onNewConversation,
  onSelectThread,
}: ThreadSidebarProps) {
  return (
    <aside className="threads" aria-label="Threads">
      <div className="threads-head">
        <h2>Threads</h2>
        <button type="button" onClick={onNewConversation} disabled={loading}>
          New conversation
        </button>
      </div>
      <p className="current-thread">
        Current: <code data-testid="thread-id">{threadId}</code>
      </p>
      <h3>
        Approval inbox{' '}
        <button type="button" className="link" onClick={inbox.refresh} disabled={!active}>
          refresh
        </button>
      </h3>
      {inbox.error !== undefined && <p className="muted">{inbox.error}</p>}
      {inbox.threads.length === 0 ? (
        <p className="muted">{inbox.loading ? 'Loading…' : 'No thread is waiting for answers.'}</p>
      ) : (
        <ul className="inbox" aria-label="Threads waiting for answers">
          {inbox.threads.map((thread) => (
            <li key={thread.threadId}>
              <button
                type="button"
                className="inbox-item"
                aria-current={thread.threadId === threadId ? 'true' : undefined}
                disabled={busy}
                onClick={() => onSelectThread(thread.threadId)}
              >
                <span className="inbox-title">{thread.title ?? thread.threadId.slice(0, 8)}</span>
                <span className="muted">
                  {thread.interrupts?.length ?? 0} waiting · {new Date(thread.updatedAt).toLocaleTimeString()}
                </span>
              </button>
            </li>
          ))}
        </ul>
      )}
      <details className="agent-state" open>
        <summary>Agent state</summary>
        <JsonView value={state ?? null} label="Shared agent state" testId="agent-state" />
      </details>
    </aside>
  )
}
