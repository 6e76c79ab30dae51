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
