import type { DecisionsClient } from '@interlude/client'
import type { Grant, PermissionRule } from '@interlude/protocol'
import { useCallback, useEffect, useState } from 'react'

export interface PermissionRulesState {
  readonly rules: readonly PermissionRule[]
  /** The bounded grants that may still apply, with their calls left (docs/approvals.md#bounded-grants). */
  readonly grants: readonly Grant[]
  /** The last read failed (typed: `CODE: message`); the list shown is the last one read. */
  readonly error: string | undefined
  readonly loaded: boolean
  readonly refresh: () => void
}

/**
 * The signed-in principal's remembered permissions (`GET {base}/permission-rules`, docs/approvals.md#remembered-
 * permissions) and bounded grants (`GET {base}/grants`, docs/approvals.md#bounded-grants), read together each time the
 * view becomes active and on `refresh()` (after a revoke, or by hand). Rules only change by this principal's approvals
 * and revokes, so there is no polling; a grant's calls left are as of the last read. Never read while inactive (replay).
 */
export function usePermissionRules(client: DecisionsClient, active: boolean): PermissionRulesState {
  const [rules, setRules] = useState<readonly PermissionRule[]>([])
  const [grants, setGrants] = useState<readonly Grant[]>([])
  const [error, setError] = useState<string | undefined>()
  const [loaded, setLoaded] = useState(false)
  const [tick, setTick] = useState(0)

  useEffect(() => {
    if (!active) return
    const controller = new AbortController()
    const { signal } = controller
    Promise.all([client.listPermissionRules({ signal }), client.listGrants({ signal })])
      .then(([items, granted]) => {
        setRules(items)
        setGrants(granted)
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
  return { rules, grants, error, loaded, refresh }
}

/** `CODE: message` of a typed error, as text (never a raw exception of something else). */
export function describeRuleError(reason: unknown): string {
  const e = reason as { code?: unknown; message?: unknown } | undefined
  return typeof e?.code === 'string'
    ? `${e.code}: ${typeof e.message === 'string' ? e.message : ''}`
    : 'UNKNOWN: the request failed.'
}
