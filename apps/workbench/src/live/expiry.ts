import { useEffect, useState } from 'react'

/** The earliest `expiresAt` of a batch in ms, if any interrupt has one. */
export function earliestExpiry(interrupts: readonly { readonly expiresAt?: string | undefined }[]): number | undefined {
  let earliest: number | undefined
  for (const interrupt of interrupts) {
    if (typeof interrupt.expiresAt !== 'string') continue
    const at = Date.parse(interrupt.expiresAt)
    if (Number.isFinite(at) && (earliest === undefined || at < earliest)) earliest = at
  }
  return earliest
}

/** True once `expiresAt` has passed; re-renders at that moment (one timer, cleared on change). */
export function useExpired(expiresAt: number | undefined, now: () => number = Date.now): boolean {
  const [expiredAt, setExpiredAt] = useState<number | undefined>(() =>
    expiresAt !== undefined && now() >= expiresAt ? expiresAt : undefined,
  )
  useEffect(() => {
    if (expiresAt === undefined) return
    const left = expiresAt - now()
    if (left <= 0) {
      setExpiredAt(expiresAt)
      return
    }
    // setTimeout caps at ~24.8 days; a later expiry simply re-arms on the next render.
    const timer = setTimeout(() => setExpiredAt(expiresAt), Math.min(left + 5, 2 ** 31 - 1))
    return () => clearTimeout(timer)
  }, [expiresAt, now])
  return expiresAt !== undefined && expiredAt === expiresAt
}

/**
 * What the server does when the batch's deadline passes (`interrupt.metadata.onExpiry`, docs/approvals.md#deadlines):
 * `keep` when any interrupt says so (keep wins in a mixed batch), else `cancel` when every interrupt says cancel,
 * else `deny`. `undefined` when the server did not say (an older server).
 */
export function batchPolicy(
  interrupts: readonly { readonly metadata?: unknown }[],
): 'deny' | 'cancel' | 'keep' | undefined {
  const policies = interrupts.map((i) => {
    const value = (i.metadata as { onExpiry?: unknown } | undefined)?.onExpiry
    return value === 'deny' || value === 'cancel' || value === 'keep' ? value : undefined
  })
  if (policies.includes('keep')) return 'keep'
  if (policies.length > 0 && policies.every((p) => p === 'cancel')) return 'cancel'
  if (policies.some((p) => p === 'deny')) return 'deny'
  return undefined
}
