import type { DecisionsClient } from '@interlude/client'
import type { PermissionRule } from '@interlude/protocol'
import { useCallback, useEffect, useState } from 'react'

export interface PermissionRulesState {
  readonly rules: readonly PermissionRule[]
  /** The last read failed (typed: `CODE: message`); the list shown is the last one read. */
  readonly error: string | undefined
  readonly loaded: boolean
  readonly refresh: () => void
}

/**
 * The signed-in principal's remembered permissions (`GET {base}/permission-rules`, docs/approvals.md#remembered-
 * permissions), read each time the view becomes active and on `refresh()` (after a revoke, or by hand). Rules only
 * change by this principal's approvals and revokes, so there is no polling. Never read while inactive (replay).
 */
export function usePermissionRules(client: DecisionsClient, active: boolean): PermissionRulesState {
  const [rules, setRules] = useState<readonly PermissionRule[]>([])
  const [error, setError] = useState<string | undefined>()
  const [loaded, setLoaded] = useState(false)
  const [tick, setTick] = useState(0)

  useEffect(() => {
    if (!active) return
    const controller = new AbortController()
    client
      .listPermissionRules({ signal: controller.signal })
      .then((items) => {
        setRules(items)
        setError(undefined)
        setLoaded(true)
      })
      .catch((reason: unknown) => {
        if (controller.signal.aborted) return
        setError(describeRuleError(reason))
        setLoaded(true)
      })
    return () => controller.abort()
  }, [client, active, tick])

  const refresh = useCallback(() => setTick((n) => n + 1), [])
  return { rules, error, loaded, refresh }
}

/** `CODE: message` of a typed error, as text (never a raw exception of something else). */
export function describeRuleError(reason: unknown): string {
  const e = reason as { code?: unknown; message?: unknown } | undefined
  return typeof e?.code === 'string'
    ? `${e.code}: ${typeof e.message === 'string' ? e.message : ''}`
    : 'UNKNOWN: the request failed.'
}
