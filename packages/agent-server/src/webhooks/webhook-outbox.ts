import type { DecisionRecord, Interrupt, WebhookEventType, WebhookPayload } from '@interlude/protocol'
import type { NewOutboxDelivery } from '../store/store.ts'
import { outboxEntries } from './outbox-entries.ts'
import type { ResolvedWebhookEndpoint } from './webhook-config.ts'

type Endpoints = readonly Pick<ResolvedWebhookEndpoint, 'url' | 'events'>[]

/** The thread and run a webhook reports on. */
export interface WebhookSubject {
  readonly threadId: string
  /** The thread's owner. */
  readonly owner: string
  readonly runId: string
}

/** What an `interrupt.*` event carries: the batch's interrupts as emitted. */
export interface BatchSubject extends WebhookSubject {
  readonly interrupts: readonly Interrupt[]
}

/**
 * `interrupt.expired` rows (docs/approvals.md, "Webhooks"): for the expiry sweeper, passed as `outbox` of the claim
 * that decides an expired batch (`via: 'expiry'`), so they commit with it. `runId` is the run that carries the expiry
 * decision out; `decision` its record.
 */
export function expiredOutboxEntries(
  endpoints: Endpoints,
  batch: BatchSubject,
  decision: DecisionRecord,
  now: number,
): NewOutboxDelivery[] {
  return outboxEntries(endpoints, 'interrupt.expired', { ...batch, decision }, now)
}

/**
 * The webhook side of the core's writes (docs/approvals.md, "Webhooks"): builds the outbox rows each change passes
 * to the store write that commits it — `interrupt.opened` with `createBatch`, `interrupt.decided` with a claim,
 * `interrupt.expired` with an expiry claim, `run.failed` with `finishRun` — and wakes the sender after a commit that
 * wrote some. Without endpoints every method answers `[]` and nothing is ever woken.
 */
export class WebhookOutbox {
  readonly #endpoints: Endpoints
  readonly #wake: () => void

  constructor(endpoints: Endpoints, wake: () => void) {
    this.#endpoints = endpoints
    this.#wake = wake
  }

  opened(batch: BatchSubject, now: number): NewOutboxDelivery[] {
    return this.#rows('interrupt.opened', batch, now)
  }

  decided(batch: BatchSubject, decision: DecisionRecord, now: number): NewOutboxDelivery[] {
    return this.#rows('interrupt.decided', { ...batch, decision }, now)
  }

  expired(batch: BatchSubject, decision: DecisionRecord, now: number): NewOutboxDelivery[] {
    return expiredOutboxEntries(this.#endpoints, batch, decision, now)
  }

  /** The right to decide moved on (docs/approvals.md#organisation-policies): with the `system:escalation` record. */
  escalated(batch: BatchSubject, decision: DecisionRecord, now: number): NewOutboxDelivery[] {
    return this.#rows('interrupt.escalated', { ...batch, decision }, now)
  }

  /** A batch's deadline is near and it is still open (`remind.before`). */
  reminder(batch: BatchSubject, now: number): NewOutboxDelivery[] {
    return this.#rows('interrupt.reminder', batch, now)
  }

  failed(run: WebhookSubject, errorCode: string, now: number): NewOutboxDelivery[] {
    return this.#rows('run.failed', { ...run, errorCode }, now)
  }

  /** After a commit that wrote `rows`: deliver them now instead of at the next poll. */
  committed(rows: readonly NewOutboxDelivery[] | undefined): void {
    if (rows !== undefined && rows.length > 0) this.#wake()
  }

  #rows(type: WebhookEventType, data: WebhookPayload['data'], now: number): NewOutboxDelivery[] {
    return outboxEntries(this.#endpoints, type, data, now)
  }
}
