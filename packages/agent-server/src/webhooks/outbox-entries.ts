import { randomUUID } from 'node:crypto'
import type { WebhookEventType, WebhookPayload } from '@interlude/protocol'
import type { NewOutboxDelivery } from '../store/store.ts'
import type { ResolvedWebhookEndpoint } from './webhook-config.ts'
import { withClientThreadId } from '../store/thread-key.ts'

/**
 * The outbox rows reporting one change (docs/approvals.md, "Webhooks"): one per endpoint subscribed to `type`,
 * each with its own `msg_<uuid>` id and the body `{ type, timestamp, data }` as JSON text. The caller passes them in
 * the store request that writes the change (`outbox`), so the rows commit or roll back with it. The id is the row's
 * key and the `webhook-id` of every attempt, which is what lets a receiver deduplicate retries.
 */
export function outboxEntries(
  endpoints: readonly Pick<ResolvedWebhookEndpoint, 'url' | 'events'>[],
  type: WebhookEventType,
  data: WebhookPayload['data'],
  now: number,
): NewOutboxDelivery[] {
  const subscribed = endpoints.filter((endpoint) => endpoint.events.has(type))
  if (subscribed.length === 0) return []
  // Receivers see the client's thread id (and `owner`), never the server's key (src/store/thread-key.ts).
  const shown = withClientThreadId(data)
  const decision = 'decision' in shown ? { decision: withClientThreadId(shown.decision) } : {}
  const body: WebhookPayload = { type, timestamp: new Date(now).toISOString(), data: { ...shown, ...decision } }
  // One text for every endpoint: the bytes signed and sent are exactly the bytes stored.
  const payload = JSON.stringify(body)
  return subscribed.map((endpoint) => ({
    deliveryId: `msg_${randomUUID()}`,
    endpoint: endpoint.url,
    eventType: type,
    payload,
  }))
}
