import { InterludeError, errorFromFetch } from '@interlude/protocol'
import type { ThreadSummary } from '@interlude/protocol'
import { useCallback, useEffect, useRef, useState } from 'react'
import type { HistoryClient } from './history-client.ts'

export interface ServerThreads {
  readonly threads: readonly ThreadSummary[]
  readonly error: string | undefined
  readonly loading: boolean
  /** Present while the server has more pages. */
  readonly loadMore: (() => void) | undefined
  readonly refresh: () => void
}

/**
 * The signed-in principal's stored threads (`GET {base}/threads`, newest first), a page at a time: the first page
 * when shown and on refresh, the next on "Load more". Never polled.
 */
export function useServerThreads(client: HistoryClient): ServerThreads {
  const [threads, setThreads] = useState<readonly ThreadSummary[]>([])
  const [cursor, setCursor] = useState<string | undefined>()
  const [error, setError] = useState<string | undefined>()
  const [loading, setLoading] = useState(false)
  const [reads, setReads] = useState(0)
  const controller = useRef<AbortController | undefined>(undefined)

  const read = useCallback(
    (after: string | undefined) => {
      controller.current?.abort()
      const current = new AbortController()
      controller.current = current
      setLoading(true)
      client
        .listThreads({ signal: current.signal, ...(after === undefined ? {} : { cursor: after }) })
        .then((page) => {
          if (current.signal.aborted) return
          setThreads((shown) => (after === undefined ? page.threads : [...shown, ...page.threads]))
          setCursor(page.nextCursor)
          setError(undefined)
        })
        .catch((reason: unknown) => {
          if (current.signal.aborted) return
          const failure = InterludeError.isInstance(reason) ? reason : errorFromFetch(reason)
          setError(`${failure.code}: ${failure.message}`)
        })
        .finally(() => {
          if (!current.signal.aborted) setLoading(false)
        })
    },
    [client],
  )

  useEffect(() => {
    read(undefined)
    return () => controller.current?.abort()
  }, [read, reads])

  const refresh = useCallback(() => setReads((n) => n + 1), [])
  const next = cursor
  return {
    threads,
    error,
    loading,
    loadMore: next === undefined ? undefined : () => read(next),
    refresh,
  }
}
