import type { DecisionsClient } from '@interlude/client'
import type { PendingBatch } from '@interlude/protocol'
import { useCallback, useEffect, useRef, useState } from 'react'

/** How often the inbox is read again while the Approvals view is shown (decisions made elsewhere). */
export const INBOX_POLL_MS = 2000
const PAGE_SIZE = 20

export interface PendingBatchesState {
  readonly batches: readonly PendingBatch[]
  /** Set when the loaded pages end with a cursor: "Load more" follows it. */
  readonly hasMore: boolean
  readonly error: string | undefined
  readonly loaded: boolean
  readonly refresh: () => void
  readonly loadMore: () => void
}

/** A batch's identity: its thread and its interrupt ids (a thread has at most one open batch). */
export function batchKey(batch: Pick<PendingBatch, 'threadId' | 'interrupts'>): string {
  return `${batch.threadId}:${batch.interrupts.map((i) => i.id).join(',')}`
}

/**
 * The cross-owner inbox (`GET {base}/interrupts?status=pending`, docs/approvals.md): the batches this principal may
 * decide, newest first. Read while `active`, again every `INBOX_POLL_MS` so that a batch decided elsewhere (the
 * owner's tab, a bot, a deadline) leaves the list; "Load more" follows the cursor, and a refresh reads as many pages
 * as are shown. Never read while inactive (replay).
 */
export function usePendingBatches(client: DecisionsClient, active: boolean): PendingBatchesState {
  const [batches, setBatches] = useState<readonly PendingBatch[]>([])
  const [cursor, setCursor] = useState<string | undefined>()
  const [error, setError] = useState<string | undefined>()
  const [loaded, setLoaded] = useState(false)
  const [tick, setTick] = useState(0)
  const pages = useRef(1)

  useEffect(() => {
    if (!active) return
    const controller = new AbortController()
    const read = async () => {
      const items: PendingBatch[] = []
      let next: string | undefined
      for (let page = 0; page < pages.current; page++) {
        const answer = await client.pending({
          limit: PAGE_SIZE,
          signal: controller.signal,
          ...(next === undefined ? {} : { cursor: next }),
        })
        items.push(...answer.items)
        next = answer.nextCursor
        if (next === undefined) break
      }
      // A batch can move between pages while they are read: keep the first copy.
      const seen = new Set<string>()
      setBatches(items.filter((b) => !seen.has(batchKey(b)) && seen.add(batchKey(b))))
      setCursor(next)
      setError(undefined)
      setLoaded(true)
    }
    let timer: ReturnType<typeof setTimeout> | undefined
    read()
      .catch((reason: unknown) => {
        if (controller.signal.aborted) return
        setError(describeError(reason))
        setLoaded(true)
      })
      .finally(() => {
        // The next read is scheduled once this one is done, so a slow server is never asked twice at once.
        if (!controller.signal.aborted) timer = setTimeout(() => setTick((n) => n + 1), INBOX_POLL_MS)
      })
    return () => {
      controller.abort()
      clearTimeout(timer)
    }
  }, [client, active, tick])

  const refresh = useCallback(() => setTick((n) => n + 1), [])
  const loadMore = useCallback(() => {
    pages.current += 1
    setTick((n) => n + 1)
  }, [])
  return { batches, hasMore: cursor !== undefined, error, loaded, refresh, loadMore }
}

/** `CODE: message` of a typed error, as text. */
export function describeError(reason: unknown): string {
  const e = reason as { code?: unknown; message?: unknown } | undefined
  return typeof e?.code === 'string' ? `${e.code}: ${typeof e.message === 'string' ? e.message : ''}` : String(reason)
}
