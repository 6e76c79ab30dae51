import type { DecisionsClient } from '@interlude/client'
import type { ThreadSnapshot } from '@interlude/protocol'
import { useCallback, useEffect, useState } from 'react'
import { describeError, INBOX_POLL_MS } from './use-pending-batches.ts'

export interface ThreadSnapshotState {
  readonly snapshot: ThreadSnapshot | undefined
  readonly error: string | undefined
  readonly refresh: () => void
}

/**
 * The selected thread as its decider may read it (`GET {base}/threads/:id`, docs/approvals.md#who-may-read): its
 * messages, decision records and unknown effects, read again every `INBOX_POLL_MS` while shown, so the continuation
 * of a decision (made here or elsewhere) appears without a reload.
 */
export function useThreadSnapshot(
  client: DecisionsClient,
  threadId: string | undefined,
  active: boolean,
  /** The thread's owner (`PendingBatch.owner`): thread ids are per owner (docs/protocol.md#thread-ids). */
  owner?: string,
): ThreadSnapshotState {
  const [snapshot, setSnapshot] = useState<ThreadSnapshot | undefined>()
  const [error, setError] = useState<string | undefined>()
  const [tick, setTick] = useState(0)

  useEffect(() => {
    setSnapshot((current) => (current?.threadId === threadId ? current : undefined))
    setError(undefined)
  }, [threadId, owner])

  useEffect(() => {
    if (!active || threadId === undefined) return
    const controller = new AbortController()
    let timer: ReturnType<typeof setTimeout> | undefined
    client
      .snapshot(threadId, { signal: controller.signal, ...(owner !== undefined ? { owner } : {}) })
      .then((next) => {
        setSnapshot(next)
        setError(undefined)
      })
      .catch((reason: unknown) => {
        if (!controller.signal.aborted) setError(describeError(reason))
      })
      .finally(() => {
        if (!controller.signal.aborted) timer = setTimeout(() => setTick((n) => n + 1), INBOX_POLL_MS)
      })
    return () => {
      controller.abort()
      clearTimeout(timer)
    }
  }, [client, threadId, owner, active, tick])

  const refresh = useCallback(() => setTick((n) => n + 1), [])
  return { snapshot: snapshot?.threadId === threadId ? snapshot : undefined, error, refresh }
}
