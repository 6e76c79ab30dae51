/**
 * Webhook delivery (docs/approvals.md, "Webhooks"): endpoint options, the outbox rows a change writes in its own
 * transaction, and the sender that delivers them at least once, signed per the Standard Webhooks spec.
 */
export type { ResolvedWebhookEndpoint, WebhookEndpoint } from './webhook-config.ts'
export { MIN_WEBHOOK_SECRET_BYTES, WEBHOOK_SECRET_ENV, redactedUrl, resolveWebhookEndpoints } from './webhook-config.ts'
export { outboxEntries } from './outbox-entries.ts'
export type { BatchSubject, WebhookSubject } from './webhook-outbox.ts'
export { expiredOutboxEntries, WebhookOutbox } from './webhook-outbox.ts'
export type { WebhookSenderOptions } from './webhook-sender.ts'
export { WebhookSender } from './webhook-sender.ts'
