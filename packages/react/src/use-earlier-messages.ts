import { useEffect, useMemo, useSyncExternalStore } from 'react'
import { EarlierMessages } from './core/earlier-messages.ts'
import type { EarlierFrom, EarlierMessagesSnapshot, EarlierSource } from './core/earlier-messages.ts'

export interface UseEarlierMessagesResult extends EarlierMessagesSnapshot {
  /** Reads the page before the loaded ones (identity-stable per thread and snapshot; never rejects). */
  readonly loadMore: () => Promise<void>
}

/**
 * The older pages of a long thread beside `useChat` (docs/client-contract.md#restoring-a-conversation): pass `chat.runtime` and
 * the snapshot `recover()` resolved with; show `messages` above `chat.messages` and call `loadMore` (a "Load earlier
 * messages" button). A new snapshot or thread starts over; an unmount aborts a read in flight.
 */
export function useEarlierMessages(runtime: EarlierSource, from: EarlierFrom | undefined): UseEarlierMessagesResult {
  const threadId = from?.threadId
  const more = from?.hasMoreMessages
  const cursor = from?.messagesCursor
  // One reader per runtime and starting point; constructing one sends nothing (StrictMode may discard it).
  const earlier = useMemo(
    () =>
      new EarlierMessages(
        runtime,
        threadId === undefined
          ? undefined
          : {
              threadId,
              ...(more !== undefined ? { hasMoreMessages: more } : {}),
              ...(cursor ? { messagesCursor: cursor } : {}),
            },
      ),
    [runtime, threadId, more, cursor],
  )
  useEffect(() => earlier.abort, [earlier])
  const snapshot = useSyncExternalStore(earlier.subscribe, earlier.getSnapshot, earlier.getSnapshot)
  return useMemo(() => ({ ...snapshot, loadMore: earlier.loadMore }), [snapshot, earlier])
}
