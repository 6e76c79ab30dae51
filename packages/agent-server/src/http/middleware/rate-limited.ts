import { InterludeError } from '@interlude/protocol'
import type { QuotaName } from '../../config/limits.ts'

/** `429 RATE_LIMITED`; `details.retryAfterSeconds` (whole seconds, at least 1) becomes the `Retry-After` header. */
export function rateLimited(quota: QuotaName, limit: number, retryAfterMs: number): InterludeError {
  const retryAfterSeconds = Math.max(1, Math.ceil(retryAfterMs / 1000))
  return new InterludeError('RATE_LIMITED', `Too many requests (${quota} quota of ${limit}); retry later.`, {
    details: { quota, limit, retryAfterSeconds },
  })
}

/** The `Retry-After` of a refusal that carries `details.retryAfterSeconds` (`RATE_LIMITED`, `SERVER_BUSY`). */
export function retryAfterOf(error: InterludeError): string | undefined {
  const details = error.details as { retryAfterSeconds?: unknown } | undefined
  const seconds = details?.retryAfterSeconds
  return typeof seconds === 'number' && Number.isFinite(seconds) && seconds > 0 ? String(Math.ceil(seconds)) : undefined
}
