import type { IncomingMessage } from 'node:http'
import type { Context } from 'hono'
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible'
import type { Limits, QuotaName, QuotaRefusal } from '../../config/limits.ts'
import type { ServerEnv } from '../env.ts'
import { rateLimited } from './rate-limited.ts'

/**
 * Budgets per client address (docs/protocol.md#limits), for what no principal can be charged with: failed
 * authentications, and new anonymous sessions (a client without a cookie is a new principal on every request). In
 * memory, per process, like the per-principal quotas.
 */
export class AddressGuard {
  readonly #failures: RateLimiterMemory | undefined
  readonly #sessions: RateLimiterMemory | undefined
  readonly #limits: Pick<Limits, 'maxFailedAuthPerMinute' | 'maxAnonymousSessionsPerMinute'>
  readonly #onRefused: ((refusal: QuotaRefusal) => void) | undefined

  constructor(
    limits: Pick<Limits, 'maxFailedAuthPerMinute' | 'maxAnonymousSessionsPerMinute'>,
    onRefused?: (refusal: QuotaRefusal) => void,
  ) {
    this.#limits = limits
    this.#onRefused = onRefused
    const perMinute = (keyPrefix: string, points: number) =>
      points > 0 ? new RateLimiterMemory({ keyPrefix, points, duration: 60 }) : undefined
    this.#failures = perMinute('auth-failures', limits.maxFailedAuthPerMinute)
    this.#sessions = perMinute('anon-sessions', limits.maxAnonymousSessionsPerMinute)
  }

  /** Whether anonymous principals share their address's budgets (off with `maxAnonymousSessionsPerMinute: 0`). */
  get sharesAnonymous(): boolean {
    return this.#sessions !== undefined
  }

  /** A failed authentication from `address`: throws `RATE_LIMITED` once the address is over its budget. */
  failed(address: string): Promise<void> {
    return this.#consume(this.#failures, 'failedAuthPerMinute', this.#limits.maxFailedAuthPerMinute, address)
  }

  /** A new anonymous session for `address`: throws `RATE_LIMITED` (and no session is issued) over the budget. */
  newSession(address: string): Promise<void> {
    const limit = this.#limits.maxAnonymousSessionsPerMinute
    return this.#consume(this.#sessions, 'anonymousSessionsPerMinute', limit, address)
  }

  async #consume(limiter: RateLimiterMemory | undefined, quota: QuotaName, limit: number, address: string) {
    if (!limiter) return
    try {
      await limiter.consume(address)
    } catch (error) {
      if (!(error instanceof RateLimiterRes)) throw error
      try {
        this.#onRefused?.({ quota, principal: undefined })
      } catch {
        // A broken metric must not turn a 429 into a 500.
      }
      throw rateLimited(quota, limit, error.msBeforeNext)
    }
  }
}

/** The client's socket address (`app.request` in tests has none: one shared key). */
export function clientAddress(c: Context<ServerEnv>): string {
  const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming
  return incoming?.socket?.remoteAddress ?? 'local'
}
