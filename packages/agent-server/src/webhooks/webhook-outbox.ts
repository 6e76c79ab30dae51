import type { DecisionLink, DecisionRecord, Interrupt, WebhookEventType, WebhookPayload } from '@interlude/protocol'
import type { NewOutboxDelivery, StoredInterrupt } from '../store/store.ts'
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

/** A batch as it opens: what `interrupt.opened` reports, and what links and other formats are made from. */
export interface OpenedBatch extends BatchSubject {
  readonly stored: readonly StoredInterrupt[]
  /** Epoch milliseconds. */
  readonly expiresAt: number
}

function subjectOf(batch: OpenedBatch): BatchSubject {
  const { stored: _stored, expiresAt: _expiresAt, ...subject } = batch
  return subject
}

/** What `interrupt.opened` carries besides the batch (docs/approvals.md#deciding-outside-the-app). */
export interface OpenedExtras {
  /**
   * Signed decision links for the batch's deciders (with `publicUrl`); `after`: a record about to be written with the
   * webhook (an escalation), which changes who decides.
   */
  readonly links?: ((batch: OpenedBatch, after?: DecisionRecord) => Promise<readonly DecisionLink[]>) | undefined
  /** Deliveries in other formats (the Slack message), written with the batch like every other row. */
  readonly rows?: ((batch: OpenedBatch, now: number) => readonly NewOutboxDelivery[]) | undefined
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
  readonly #extras: OpenedExtras

  constructor(endpoints: Endpoints, wake: () => void, extras: OpenedExtras = {}) {
    this.#endpoints = endpoints
    this.#wake = wake
    this.#extras = extras
  }

  /** `interrupt.opened` rows, with decision links when the server has a public URL, and the Slack message. */
  async opened(batch: OpenedBatch, now: number): Promise<NewOutboxDelivery[]> {
    const links = await this.#links('interrupt.opened', batch)
    const rows = this.#rows('interrupt.opened', { ...subjectOf(batch), ...links }, now)
    return [...rows, ...(this.#extras.rows?.(batch, now) ?? [])]
  }

  /** `{ links }` when an endpoint receives `type` and the server makes links; else nothing. */
  async #links(
    type: WebhookEventType,
    batch: OpenedBatch,
    after?: DecisionRecord,
  ): Promise<{ links?: readonly DecisionLink[] }> {
    if (!this.#endpoints.some((endpoint) => endpoint.events.has(type))) return {}
    const links = (await this.#extras.links?.(batch, after)) ?? []
    return links.length > 0 ? { links } : {}
  }

  decided(batch: BatchSubject, decision: DecisionRecord, now: number): NewOutboxDelivery[] {
    return this.#rows('interrupt.decided', { ...batch, decision }, now)
  }

  expired(batch: BatchSubject, decision: DecisionRecord, now: number): NewOutboxDelivery[] {
    return expiredOutboxEntries(this.#endpoints, batch, decision, now)
  }

  /**
   * The right to decide moved on (docs/approvals.md#organisation-policies): with the `system:escalation` record, and
   * decision links for the deciders it names.
   */
  async escalated(batch: OpenedBatch, decision: DecisionRecord, now: number): Promise<NewOutboxDelivery[]> {
    const links = await this.#links('interrupt.escalated', batch, decision)
    return this.#rows('interrupt.escalated', { ...subjectOf(batch), decision, ...links }, now)
  }

  /** A batch's deadline is near and it is still open (`remind.before`), with decision links for its deciders. */
  async reminder(batch: OpenedBatch, now: number): Promise<NewOutboxDelivery[]> {
    const links = await this.#links('interrupt.reminder', batch)
    return this.#rows('interrupt.reminder', { ...subjectOf(batch), ...links }, now)
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
