import { InterludeError } from '@interlude/protocol'
import type { QuotaName } from '../../config/limits.ts'
import { rateLimited } from './rate-limited.ts'

export interface BodyBudgetOptions {
  /** Bytes of bodies buffered at once across every request; `0` = unbounded. */
  readonly total: number
  /** Of which one principal may hold at once; `0` = unbounded. */
  readonly perPrincipal: number
  readonly onRefused?: (quota: QuotaName, principal: string) => void
}

/** Retry-After of a full budget: bodies are read within `bodyIdleTimeoutMs` or dropped, so a second is a fair guess. */
const BUSY_RETRY_SECONDS = 1

/**
 * The bytes of request bodies this process buffers at once. `jsonBody` reserves a body's bytes before it reads them
 * (the declared `Content-Length` at once, a chunked body chunk by chunk) and releases them once the body is parsed:
 * a body that does not fit is refused without being read — `SERVER_BUSY` when the server-wide budget is used up,
 * `RATE_LIMITED` when the principal's share is — so held bodies cannot grow the heap without bound.
 */
export class BodyBudget {
  private used = 0
  private readonly byPrincipal = new Map<string, number>()

  constructor(private readonly options: BodyBudgetOptions) {}

  /** Bytes reserved right now (tests, metrics). */
  get reserved(): number {
    return this.used
  }

  /** Reserves `bytes` more for `principal`, or throws (and reserves nothing). */
  reserve(principal: string, bytes: number): void {
    const { total, perPrincipal } = this.options
    const mine = this.byPrincipal.get(principal) ?? 0
    if (perPrincipal > 0 && mine + bytes > perPrincipal) {
      this.options.onRefused?.('bufferedBodyBytesPerPrincipal', principal)
      throw rateLimited('bufferedBodyBytesPerPrincipal', perPrincipal, BUSY_RETRY_SECONDS * 1000)
    }
    if (total > 0 && this.used + bytes > total) {
      this.options.onRefused?.('bufferedBodyBytes', principal)
      throw new InterludeError('SERVER_BUSY', 'The server is reading too many request bodies; retry later.', {
        details: { limit: 'maxBufferedBodyBytes', max: total, retryAfterSeconds: BUSY_RETRY_SECONDS },
      })
    }
    this.used += bytes
    this.byPrincipal.set(principal, mine + bytes)
  }

  /** Gives back `bytes` reserved for `principal`. */
  release(principal: string, bytes: number): void {
    if (bytes <= 0) return
    this.used = Math.max(0, this.used - bytes)
    const left = (this.byPrincipal.get(principal) ?? 0) - bytes
    if (left <= 0) this.byPrincipal.delete(principal)
    else this.byPrincipal.set(principal, left)
  }
}
