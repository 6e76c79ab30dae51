import { errorFromFetch, errorFromResponse, InterludeError } from '@interlude/protocol'
import type { ThreadListPage, ThreadSummary } from '@interlude/protocol'
import { useCallback, useEffect, useState } from 'react'
import { authHeaders } from '../auth/session-token.ts'

export interface InboxState {
  readonly threads: readonly ThreadSummary[]
  readonly error: string | undefined
  readonly loading: boolean
  readonly refresh: () => void
}

/**
 * The approval inbox: the caller's threads with pending interrupts
 * (`GET /api/agent/threads?status=interrupted`). Fetched when the live view is active and its
 * `refreshKey` changes; never polled, never during replay.
 */
export function useInbox(active: boolean, refreshKey: string): InboxState {
  const [threads, setThreads] = useState<readonly ThreadSummary[]>([])
  const [error, setError] = useState<string | undefined>()
  const [loading, setLoading] = useState(false)
  const [manual, setManual] = useState(0)

  useEffect(() => {
    if (!active) return
    const controller = new AbortController()
    setLoading(true)
    fetch('/api/agent/threads?status=interrupted', {
      credentials: 'same-origin',
      headers: authHeaders(),
      signal: controller.signal,
    })
      .then(async (response) => {
        if (response.status === 404) {
          // A server without the inbox route: no list, nothing alarming.
          setThreads([])
          setError('The inbox is not available on this server.')
          return
        }
        // The protocol's one mapping of an HTTP answer to an error.
        if (!response.ok) throw await errorFromResponse(response)
        const page = (await response.json().catch(() => undefined)) as ThreadListPage | undefined
        setThreads(Array.isArray(page?.threads) ? page.threads : [])
        setError(undefined)
      })
      .catch((reason: unknown) => {
        if (controller.signal.aborted) return
        const error = InterludeError.isInstance(reason) ? reason : errorFromFetch(reason)
        setError(`${error.code}: ${error.message}`)
      })
      .finally(() => {
        if (!controller.signal.aborted) setLoading(false)
      })
    return () => controller.abort()
  }, [active, refreshKey, manual])

  const refresh = useCallback(() => setManual((n) => n + 1), [])
  return { threads, error, loading, refresh }
}
