/**
 * # Webhook sender
 *
 * Delivers the durable webhook outbox (docs/approvals.md, "Webhooks"). Rows are written by the store in the same
 * transaction as the change they report (`outboxEntries`); this class only sends them.
 *
 * What it guarantees:
 * - **At least once.** A row leaves `pending` only when an attempt is settled: any 2xx → `delivered`; anything else
 *   (status, timeout, network error, a 3xx — redirects are never followed) → `retry` at a growing, jittered delay,
 *   until `maxAttempts`, then `failed` with one `logError` line. A sender that stops or dies mid-request leaves the row
 *   locked; when the lock ends any sender (this process after a restart, or another replica) claims it again.
 * - **One sender per delivery at a time.** `claimOutbox` locks the rows it returns to this sender's `executorId` until
 *   `now + lockMs` (PostgreSQL: `SKIP LOCKED`), only the lock holder can settle, and a request is bounded by
 *   `timeoutMs`, which must be at most half the lock: a row is never sent by two senders at once.
 * - **Stable ids.** The `webhook-id` header is the row id (`msg_<uuid>`), the same on every attempt, so a receiver
 *   deduplicates retries and the rare duplicate after a crash on it.
 * - **Only configured URLs.** A row whose endpoint is no longer configured is settled `failed` without a request.
 *
 * Latency: the core calls `wake()` after committing a change that wrote rows, so a delivery starts at once; the poll
 * (`pollMs`) picks up rows written by other replicas and due retries.
 */
import { randomUUID } from 'node:crypto'
import type { Clock } from '../clock.ts'
import { systemClock } from '../clock.ts'
import type { OutboxDelivery, OutboxSettlement, Store } from '../store/store.ts'
import type { Logger } from '../observability/logger.ts'
import { retryDelayMs } from './retry-backoff.ts'
import type { DeliveryEndpoint } from './webhook-config.ts'
import { redactedUrl } from './webhook-config.ts'
import { sendWebhookRequest } from './webhook-request.ts'

export interface WebhookSenderOptions {
  readonly store: Pick<Store, 'claimOutbox' | 'settleOutbox'>
  /** From `resolveWebhookEndpoints` (and the Slack webhook): the only URLs ever called, and their signing keys. */
  readonly endpoints: readonly DeliveryEndpoint[]
  /** Failed deliveries (one structured line each) and store errors. Never receives a secret. */
  readonly logError: (message: string, error: unknown) => void
  /** One `webhook.delivered` / `webhook.retry` line per attempt that settled (observability/logger.ts). */
  readonly log?: Pick<Logger, 'info' | 'warn'>
  /** The owner of the locks this sender takes. @default `exec_<uuid>` */
  readonly executorId?: string
  /** @default systemClock */
  readonly now?: Clock
  /** @default globalThis.fetch */
  readonly fetch?: typeof fetch
  /** Interval of the outbox poll (other replicas' rows, due retries). @default 500 */
  readonly pollMs?: number
  /** How long a claimed row stays locked to this sender; at least 2 × `timeoutMs`. @default 30000 */
  readonly lockMs?: number
  /** Deliveries in flight at once; also the most rows one claim takes. @default 16 */
  readonly concurrency?: number
  /** Per-request timeout. @default 10000 */
  readonly timeoutMs?: number
  /**
   * Attempts before a delivery is `failed`. With the default back-off the last attempt comes at least 32 minutes
   * (typically 43) after the first, so a receiver outage of 30 minutes loses nothing. @default 17
   */
  readonly maxAttempts?: number
  /** Wait after the first failed attempt; doubles per attempt (±25% jitter). @default 1000 */
  readonly retryBaseMs?: number
  /** The longest wait between attempts. @default 300000 (5 min) */
  readonly retryMaxMs?: number
  /** How long `stop()` waits for in-flight requests before aborting them. @default 5000 */
  readonly stopTimeoutMs?: number
}

/** The sender settings a host may change (`ServerOptions.webhookDelivery`; each default: `WebhookSenderOptions`). */
export type WebhookDeliveryOptions = Partial<
  Pick<
    WebhookSenderOptions,
    'pollMs' | 'lockMs' | 'concurrency' | 'timeoutMs' | 'maxAttempts' | 'retryBaseMs' | 'retryMaxMs' | 'stopTimeoutMs'
  >
>

/** The retry defaults (docs/decisions.md, "Webhooks"): 1 s doubling to 5 min, 17 attempts (≥ 32 min of retries). */
export const WEBHOOK_RETRY_DEFAULTS = { maxAttempts: 17, retryBaseMs: 1000, retryMaxMs: 300_000 } as const

type Settings = Required<Omit<WebhookSenderOptions, 'store' | 'endpoints' | 'logError' | 'log'>>

export class WebhookSender {
  readonly executorId: string
  readonly #store: WebhookSenderOptions['store']
  readonly #logError: WebhookSenderOptions['logError']
  readonly #log: WebhookSenderOptions['log']
  readonly #endpoints: ReadonlyMap<string, DeliveryEndpoint>
  readonly #s: Settings
  readonly #inFlight = new Set<Promise<void>>()
  #running = false
  #timer: ReturnType<typeof setInterval> | undefined
  #stopping = new AbortController()
  /** A round was asked for (wake, poll, a freed slot) since the pump last looked. */
  #again = false
  #pumping = false
  /** The current (or last) pump, awaited by `stop()`. */
  #pump: Promise<void> = Promise.resolve()
  /** The last claim filled every free slot: more rows may be due as soon as a slot frees up. */
  #backlog = false
  #stopped: Promise<void> = Promise.resolve()

  constructor(options: WebhookSenderOptions) {
    this.#store = options.store
    this.#logError = options.logError
    this.#log = options.log
    this.#endpoints = new Map(options.endpoints.map((endpoint) => [endpoint.url, endpoint]))
    this.#s = {
      executorId: options.executorId ?? `exec_${randomUUID()}`,
      now: options.now ?? systemClock,
      fetch: options.fetch ?? globalThis.fetch,
      pollMs: positive('pollMs', options.pollMs ?? 500),
      lockMs: positive('lockMs', options.lockMs ?? 30_000),
      concurrency: count('concurrency', options.concurrency ?? 16),
      timeoutMs: positive('timeoutMs', options.timeoutMs ?? 10_000),
      maxAttempts: count('maxAttempts', options.maxAttempts ?? WEBHOOK_RETRY_DEFAULTS.maxAttempts),
      retryBaseMs: positive('retryBaseMs', options.retryBaseMs ?? WEBHOOK_RETRY_DEFAULTS.retryBaseMs),
      retryMaxMs: positive('retryMaxMs', options.retryMaxMs ?? WEBHOOK_RETRY_DEFAULTS.retryMaxMs),
      stopTimeoutMs: positive('stopTimeoutMs', options.stopTimeoutMs ?? 5000),
    }
    // The lock must outlive the request and its settle, or another sender could send the row concurrently.
    if (this.#s.lockMs < 2 * this.#s.timeoutMs) throw new RangeError('lockMs must be at least 2 × timeoutMs.')
    this.executorId = this.#s.executorId
  }

  /** Starts the poll and delivers what is due now. */
  start(): void {
    if (this.#running) return
    this.#running = true
    this.#stopping = new AbortController()
    this.#timer = setInterval(() => this.wake(), this.#s.pollMs)
    this.#timer.unref?.()
    this.wake()
  }

  /** Deliver now: called after a commit that wrote outbox rows. Cheap when nothing is due; a no-op when stopped. */
  wake(): void {
    this.#again = true
    if (!this.#running || this.#pumping) return
    this.#pumping = true
    this.#pump = this.#rounds()
  }

  /**
   * Stops polling and waits for in-flight deliveries, at most `stopTimeoutMs`; then aborts the requests still
   * running. Their rows are not settled: they stay locked until `lockMs` ends and are then sent again by whichever
   * sender claims them (same `webhook-id`).
   */
  stop(): Promise<void> {
    if (this.#running) {
      this.#running = false
      clearInterval(this.#timer)
      this.#timer = undefined
      this.#stopped = this.#stopWithin(this.#stopping)
    }
    return this.#stopped
  }

  async #stopWithin(stopping: AbortController): Promise<void> {
    const drained = this.#drain()
    let timer: ReturnType<typeof setTimeout> | undefined
    const timedOut = await Promise.race([
      drained.then(() => false),
      new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), this.#s.stopTimeoutMs))),
    ])
    clearTimeout(timer)
    if (timedOut) {
      stopping.abort()
      await drained
    }
  }

  async #drain(): Promise<void> {
    // The pump first: a claim it is awaiting may still add deliveries.
    await this.#pump
    await Promise.allSettled([...this.#inFlight])
  }

  async #rounds(): Promise<void> {
    try {
      while (this.#again && this.#running) {
        this.#again = false
        await this.#round()
      }
    } catch (error) {
      this.#logError('webhook outbox round threw', error)
    } finally {
      // No await between the loop's last check and here, so a wake() in between cannot be lost.
      this.#pumping = false
    }
  }

  async #round(): Promise<void> {
    const free = this.#s.concurrency - this.#inFlight.size
    if (free <= 0) return // a finishing delivery wakes the pump again
    const now = this.#s.now()
    let rows: OutboxDelivery[]
    try {
      rows = await this.#store.claimOutbox({
        executorId: this.#s.executorId,
        now,
        lockUntil: now + this.#s.lockMs,
        limit: free,
      })
    } catch (error) {
      this.#logError('webhook outbox claim failed', error)
      return
    }
    this.#backlog = rows.length === free
    for (const row of rows) {
      const delivery = this.#deliver(row)
        // Only an injected clock or fetch could throw here; the row then waits for its lock to end.
        .catch((error: unknown) => this.#logError('webhook delivery threw', error))
        .finally(() => {
          this.#inFlight.delete(delivery)
          if (this.#backlog) this.wake()
        })
      this.#inFlight.add(delivery)
    }
  }

  async #deliver(row: OutboxDelivery): Promise<void> {
    const attempt = row.attempts + 1
    const endpoint = this.#endpoints.get(row.endpoint)
    let settlement: OutboxSettlement
    if (endpoint === undefined) {
      settlement = this.#failed(row, 'endpoint not configured')
    } else {
      const result = await sendWebhookRequest(row, endpoint, {
        fetch: this.#s.fetch,
        timestampSeconds: Math.floor(this.#s.now() / 1000),
        timeoutMs: this.#s.timeoutMs,
        signal: this.#stopping.signal,
      })
      if (result.ok) settlement = { deliveryId: row.deliveryId, executorId: this.#s.executorId, outcome: 'delivered' }
      else if (result.stopped)
        return // left locked: the attempt's outcome is unknown, so it is sent again later
      else if (attempt >= this.#s.maxAttempts) settlement = this.#failed(row, result.error)
      else {
        const wait = retryDelayMs(attempt, this.#s.retryBaseMs, this.#s.retryMaxMs)
        settlement = {
          deliveryId: row.deliveryId,
          executorId: this.#s.executorId,
          outcome: 'retry',
          nextAttemptAt: this.#s.now() + wait,
          error: result.error,
        }
      }
    }
    await this.#settle(row, attempt, settlement)
  }

  #failed(row: OutboxDelivery, error: string): OutboxSettlement {
    return { deliveryId: row.deliveryId, executorId: this.#s.executorId, outcome: 'failed', error }
  }

  async #settle(row: OutboxDelivery, attempt: number, settlement: OutboxSettlement): Promise<void> {
    let settled: boolean
    try {
      settled = await this.#store.settleOutbox(settlement)
    } catch (error) {
      // Unsettled, the row stays locked and is retried after its lock: at least once still holds.
      this.#logError('webhook outbox settle failed', error)
      return
    }
    const line = {
      deliveryId: row.deliveryId,
      endpoint: redactedUrl(row.endpoint),
      eventType: row.eventType,
      attempts: attempt,
    }
    if (settled && settlement.outcome !== 'failed')
      this.#log?.[settlement.outcome === 'delivered' ? 'info' : 'warn'](
        { event: `webhook.${settlement.outcome}`, ...line },
        `webhook ${settlement.outcome}`,
      )
    if (!settled) {
      // Only when this sender held the row past its lock (a stalled process); another sender owns it now.
      this.#logError('webhook delivery lock lost', line)
    } else if (settlement.outcome === 'failed') {
      // Logged only by the settle that moved the row to `failed`, so exactly once per delivery.
      this.#logError('webhook delivery failed', { ...line, error: settlement.error })
    }
  }
}

function positive(name: string, value: number): number {
  if (!(value > 0) || !Number.isFinite(value)) throw new RangeError(`${name} must be a positive number.`)
  return value
}

function count(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer.`)
  return value
}
