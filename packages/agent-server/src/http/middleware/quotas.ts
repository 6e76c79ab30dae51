import type { Context, MiddlewareHandler } from 'hono'
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible'
import type { Limits, QuotaName, QuotaRefusal } from '../../config/limits.ts'
import type { Store } from '../../store/store.ts'
import type { ServerEnv } from '../env.ts'
import { BodyBudget } from './body-budget.ts'
import { rateLimited } from './rate-limited.ts'

export type { QuotaName, QuotaRefusal } from '../../config/limits.ts'

export type QuotaLimits = Pick<
  Limits,
  | 'maxConcurrentRunsPerPrincipal'
  | 'maxOpenStreamsPerPrincipal'
  | 'maxNewThreadsPerMinute'
  | 'maxRequestsPerSecond'
  | 'maxBufferedBodyBytes'
  | 'maxBufferedBodyBytesPerPrincipal'
>

export interface QuotaOptions {
  readonly limits: QuotaLimits
  readonly store: Store
  /** Called on every refusal (a metric); never throws into the request. */
  readonly onQuotaRefused?: (refusal: QuotaRefusal) => void
}

/**
 * Per-principal quotas (docs/protocol.md, `RATE_LIMITED`): requests per second and new threads per minute are token
 * buckets of rate-limiter-flexible's in-memory limiter (per process); open streams are counted here (a stream lives
 * in this process); concurrent runs are counted in the store at admission (so they hold across replicas), plus the
 * admissions of this process still in flight (so a burst cannot slip between the count and the write).
 */
export class Quotas {
  readonly bodies: BodyBudget
  private readonly limits: QuotaLimits
  private readonly store: Store
  private readonly onRefused: ((refusal: QuotaRefusal) => void) | undefined
  private readonly requests: RateLimiterMemory | undefined
  private readonly threads: RateLimiterMemory | undefined
  private readonly streams = new Map<string, number>()
  /** Per owner: the threads with an admission write in flight (a thread runs one run at a time), and how many each. */
  private readonly admitting = new Map<string, Map<string, number>>()

  constructor(options: QuotaOptions) {
    // Checked once, by resolveServerConfig: non-negative integers, 0 turns a quota off.
    const { limits } = options
    this.limits = limits
    this.store = options.store
    this.onRefused = options.onQuotaRefused
    this.requests =
      limits.maxRequestsPerSecond > 0
        ? new RateLimiterMemory({ keyPrefix: 'rps', points: limits.maxRequestsPerSecond, duration: 1 })
        : undefined
    this.threads =
      limits.maxNewThreadsPerMinute > 0
        ? new RateLimiterMemory({ keyPrefix: 'threads', points: limits.maxNewThreadsPerMinute, duration: 60 })
        : undefined
    this.bodies = new BodyBudget({
      total: limits.maxBufferedBodyBytes,
      perPrincipal: limits.maxBufferedBodyBytesPerPrincipal,
      onRefused: (quota, principal) => this.refused(quota, principal),
    })
  }

  private refused(quota: QuotaName, principal: string | undefined): void {
    try {
      this.onRefused?.({ quota, principal })
    } catch {
      // A broken metric must not turn a 429 into a 500.
    }
  }

  private async consume(
    limiter: RateLimiterMemory | undefined,
    quota: QuotaName,
    limit: number,
    principal: string,
  ): Promise<void> {
    if (!limiter) return
    try {
      await limiter.consume(principal)
    } catch (error) {
      if (!(error instanceof RateLimiterRes)) throw error
      this.refused(quota, principal)
      throw rateLimited(quota, limit, error.msBeforeNext)
    }
  }

  /** Requests per second of this principal (every authenticated request). */
  request(principal: string): Promise<void> {
    return this.consume(this.requests, 'requestsPerSecond', this.limits.maxRequestsPerSecond, principal)
  }

  /** Charges `points` more requests to `key` (work a request did beyond its own point); never refuses this one. */
  async charge(key: string, points: number): Promise<void> {
    if (this.requests && points > 0) await this.requests.penalty(key, points)
  }

  /** A thread made without a run (a fork, docs/time-travel.md) takes a point of the new-threads bucket. */
  newThread(owner: string): Promise<void> {
    return this.consume(this.threads, 'newThreadsPerMinute', this.limits.maxNewThreadsPerMinute, owner)
  }

  /** Takes one open-stream slot of the principal, or throws `RATE_LIMITED`; the answer releases it (once). */
  openStream(principal: string): () => void {
    const max = this.limits.maxOpenStreamsPerPrincipal
    const open = this.streams.get(principal) ?? 0
    if (max > 0 && open >= max) {
      this.refused('openStreams', principal)
      // A stream slot frees when a client disconnects; a second is a fair guess.
      throw rateLimited('openStreams', max, 1000)
    }
    this.streams.set(principal, open + 1)
    let released = false
    return () => {
      if (released) return
      released = true
      const left = (this.streams.get(principal) ?? 1) - 1
      if (left <= 0) this.streams.delete(principal)
      else this.streams.set(principal, left)
    }
  }

  /**
   * Admission of a run about to be written for `owner` (the thread's owner is charged, also for a decision by an
   * approver): the store's count of the owner's running runs plus this process's admissions in flight must stay
   * below the quota, and a new thread takes a point of the per-minute bucket. Returns the release of the in-flight
   * slot (call it once the admission write is done, whatever its outcome).
   */
  async beforeStart(
    owner: string,
    options: { readonly threadId: string; readonly newThread: boolean },
  ): Promise<() => void> {
    const max = this.limits.maxConcurrentRunsPerPrincipal
    const { threadId } = options
    const threads = this.admitting.get(owner) ?? new Map<string, number>()
    this.admitting.set(owner, threads)
    threads.set(threadId, (threads.get(threadId) ?? 0) + 1)
    // Concurrent admissions on one thread (e.g. two tabs deciding one batch) can start one run at most.
    const inFlight = threads.size
    let released = false
    const release = () => {
      if (released) return
      released = true
      const left = (threads.get(threadId) ?? 1) - 1
      if (left > 0) threads.set(threadId, left)
      else threads.delete(threadId)
      if (threads.size === 0 && this.admitting.get(owner) === threads) this.admitting.delete(owner)
    }
    try {
      if (max > 0) {
        const running = (await this.store.countRunningRuns?.(owner)) ?? 0
        if (running + inFlight > max) {
          this.refused('concurrentRuns', owner)
          // A run ends when it finishes or pauses; a few seconds is a fair guess.
          throw rateLimited('concurrentRuns', max, 2000)
        }
      }
      if (options.newThread)
        await this.consume(this.threads, 'newThreadsPerMinute', this.limits.maxNewThreadsPerMinute, owner)
      return release
    } catch (error) {
      release()
      throw error
    }
  }
}

/**
 * After authentication: the principal's requests-per-second quota, the body budget for `jsonBody`, and an open-stream
 * slot for every event-stream answer, held until the stream ends or the client goes away.
 */
export function quotaMiddleware(quotas: Quotas, basePath: string): MiddlewareHandler<ServerEnv> {
  const runs = `${basePath}/runs`
  const events = new RegExp(`^${basePath.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/threads/[^/]+/events$`)
  return async function quotas_(c, next) {
    // An anonymous principal is charged to its address (auth.ts): a new cookie is not a new budget.
    const principal = c.get('quotaKey') ?? c.get('principal')
    await quotas.request(principal)
    c.set('bodyBudget', quotas.bodies)
    // Refused before the handler runs (and before admission), so a refused stream changes nothing.
    const { method, path } = c.req
    const wantsStream = method === 'POST' ? path === runs : method === 'GET' && events.test(path)
    // The stream the route answers with frees the slot when it ends (`takeStreamSlot`); any other answer at once.
    const slot = wantsStream ? { release: quotas.openStream(principal), taken: false } : undefined
    c.set('streamSlot', slot)
    try {
      await next()
    } catch (error) {
      slot?.release()
      throw error
    }
    // Not taken by a stream, or taken and then answered otherwise (the handler threw after it): free it now.
    if (slot && (!slot.taken || !(c.res.headers.get('content-type') ?? '').startsWith('text/event-stream')))
      slot.release()
  }
}

/**
 * For a route that answers with an event stream: the open-stream slot the quota middleware took for this request,
 * to be released when the stream ends, fails, or is cancelled (`sseBody`'s `onEnd`). Without quotas: nothing.
 */
export function takeStreamSlot(c: Context<ServerEnv>): (() => void) | undefined {
  const slot = c.get('streamSlot')
  if (!slot) return undefined
  slot.taken = true
  return slot.release
}
