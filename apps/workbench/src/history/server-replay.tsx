import { useEffect, useMemo, useRef, useState } from 'react'
import { ReplayView } from '../replay/replay-view.tsx'
import './history.css'
import { BranchTree } from './branch-tree.tsx'
import { ForkActions } from './fork-actions.tsx'
import type { HistoryClient } from './history-client.ts'
import { readThreadLog } from './read-thread-log.ts'
import type { ThreadLogRead } from './read-thread-log.ts'
import { useServerThreads } from './use-server-threads.ts'

export interface ServerReplayProps {
  readonly client: HistoryClient
  readonly onReturnToLive: () => void
  /** Opens a thread (a fresh fork) in the live view. */
  readonly onOpenLive: (threadId: string) => void
  /** Opens this thread at once. */
  readonly initialThreadId?: string
}

type Opened =
  | { readonly phase: 'reading'; readonly threadId: string; readonly events: number; readonly stop: () => void }
  | { readonly phase: 'read'; readonly threadId: string; readonly read: ThreadLogRead; readonly key: number }

/**
 * Any stored thread replayed from the server's log, with no browser recording (apps/workbench/README.md#time-travel): the
 * principal's threads, the chosen one read page by page into frames for the usual player and inspector, its branch
 * tree, and on every frame "Fork here" / "What if…", which open the fork in the live view.
 */
export function ServerReplay({ client, onReturnToLive, onOpenLive, initialThreadId }: ServerReplayProps) {
  const list = useServerThreads(client)
  const [opened, setOpened] = useState<Opened | undefined>()
  const reading = useRef<AbortController | undefined>(undefined)
  const titles = useMemo(
    () => new Map(list.threads.flatMap((t) => (t.title === undefined ? [] : [[t.threadId, t.title] as const]))),
    [list.threads],
  )
  const titlesRef = useRef(titles)
  titlesRef.current = titles

  const open = (threadId: string) => {
    reading.current?.abort()
    const controller = new AbortController()
    reading.current = controller
    const stop = () => controller.abort()
    setOpened({ phase: 'reading', threadId, events: 0, stop })
    void readThreadLog(client, threadId, {
      title: titlesRef.current.get(threadId) ?? `Thread ${threadId}`,
      signal: controller.signal,
      onProgress: ({ events }) => setOpened({ phase: 'reading', threadId, events, stop }),
    }).then((read) => {
      // A later choice replaced this read; "Stop reading" keeps what was read.
      if (reading.current !== controller) return
      reading.current = undefined
      setOpened({ phase: 'read', threadId, read, key: Date.now() })
    })
  }
  const openRef = useRef(open)
  openRef.current = open

  useEffect(() => {
    if (initialThreadId !== undefined) openRef.current(initialThreadId)
    return () => reading.current?.abort()
  }, [initialThreadId])

  const read = opened?.phase === 'read' ? opened.read : undefined
  return (
    <div className="server-replay">
      <section className="stored-threads" aria-label="Stored threads">
        <div className="stored-threads-list">
          <h2>Stored threads</h2>
          <p className="muted">Your threads on the server, newest first: replay any of them from the server’s log.</p>
          {list.error && (
            <p className="error" role="alert">
              {list.error}
            </p>
          )}
          <ul>
            {list.threads.map((thread) => (
              <li
                key={thread.threadId}
                data-thread-id={thread.threadId}
                aria-current={opened?.threadId === thread.threadId ? 'true' : undefined}
              >
                <button type="button" className="link" onClick={() => open(thread.threadId)}>
                  {thread.title ?? thread.threadId}
                </button>{' '}
                <span className="muted">
                  {thread.status} · {new Date(thread.updatedAt).toLocaleString()}
                </span>
              </li>
            ))}
          </ul>
          {!list.loading && list.threads.length === 0 && !list.error && <p className="muted">No stored threads.</p>}
          <div className="row-actions">
            {list.loadMore && (
              <button type="button" onClick={list.loadMore} disabled={list.loading}>
                Load more
              </button>
            )}
            <button type="button" onClick={list.refresh} disabled={list.loading}>
              Refresh
            </button>
            <button type="button" onClick={onReturnToLive}>
              Return to Live
            </button>
          </div>
        </div>
        {opened?.phase === 'reading' && (
          <p role="status" className="reading">
            Reading the log of <code>{opened.threadId}</code>… {opened.events} events{' '}
            <button type="button" onClick={opened.stop}>
              Stop reading
            </button>
          </p>
        )}
        {read && opened && (
          <div className="stored-thread-side">
            {read.error && (
              <p className="error" role="alert">
                {read.error.code}: {read.error.message}
              </p>
            )}
            {!read.complete && !read.error && (
              <p className="muted" role="status">
                {read.truncated ? 'Only the start of this log is shown (the frame limit).' : 'Reading was stopped.'}
              </p>
            )}
            <BranchTree client={client} threadId={opened.threadId} titles={titles} onOpen={open} />
          </div>
        )}
      </section>
      {read && opened?.phase === 'read' && read.events > 0 && (
        <ReplayView
          key={opened.key}
          recording={read.recording}
          sourceLabel="server log"
          notice={`read from the server: ${read.events} events. Forks are new threads; nothing runs again.`}
          onReturnToLive={onReturnToLive}
          frameActions={(view) => (
            <ForkActions
              client={client}
              threadId={opened.threadId}
              view={view}
              onForked={(fork) => onOpenLive(fork.threadId)}
            />
          )}
        />
      )}
    </div>
  )
}
