import type { OutboxDelivery } from '../store/store.ts'
import type { DeliveryEndpoint } from './webhook-config.ts'

/** What one attempt needs besides the delivery. */
export interface WebhookRequestOptions {
  readonly fetch: typeof fetch
  /** Seconds of the `webhook-timestamp` header (the attempt's time, not the event's). */
  readonly timestampSeconds: number
  readonly timeoutMs: number
  /** Aborts the request when the sender stops. */
  readonly signal: AbortSignal
}

/**
 * How an attempt ended. `error` is a short description written by this module (status code, timeout, network error
 * code), never a raw exception message: it is stored in the outbox and may be shown to operators.
 */
export type WebhookAttemptResult =
  { readonly ok: true } | { readonly ok: false; readonly error: string; readonly stopped: boolean }

/**
 * One signed POST of a delivery (Standard Webhooks): the stored body byte for byte, `webhook-id` = the row id (stable
 * across retries), `webhook-timestamp` and `webhook-signature: v1,<base64 HMAC-SHA256 of "id.timestamp.body">` from the
 * `standardwebhooks` package. Any 2xx is success; redirects are never followed (a 3xx is a failure), so only the
 * configured URL is ever called. Never throws.
 */
export async function sendWebhookRequest(
  delivery: Pick<OutboxDelivery, 'deliveryId' | 'payload'>,
  endpoint: DeliveryEndpoint,
  options: WebhookRequestOptions,
): Promise<WebhookAttemptResult> {
  const { deliveryId, payload } = delivery
  const timestamp = options.timestampSeconds
  let response: Response
  try {
    response = await options.fetch(endpoint.url, {
      method: 'POST',
      redirect: 'manual',
      headers: endpoint.signer
        ? {
            'content-type': 'application/json',
            'webhook-id': deliveryId,
            'webhook-timestamp': String(timestamp),
            'webhook-signature': endpoint.signer.sign(deliveryId, new Date(timestamp * 1000), payload),
          }
        : { 'content-type': 'application/json' },
      body: payload,
      signal: AbortSignal.any([options.signal, AbortSignal.timeout(options.timeoutMs)]),
    })
  } catch (error) {
    if (options.signal.aborted) return { ok: false, error: 'the sender stopped during the request', stopped: true }
    return { ok: false, error: describeFailure(error, options.timeoutMs), stopped: false }
  }
  // The body is not read: only the status counts, and cancelling frees the connection.
  await response.body?.cancel().catch(() => undefined)
  if (response.status >= 200 && response.status < 300) return { ok: true }
  const redirect = response.status >= 300 && response.status < 400 ? ' (redirects are not followed)' : ''
  return { ok: false, error: `HTTP ${response.status}${redirect}`, stopped: false }
}

function describeFailure(error: unknown, timeoutMs: number): string {
  if (error instanceof Error && error.name === 'TimeoutError') return `no answer within ${timeoutMs} ms`
  // Node's fetch rejects with `TypeError('fetch failed')` whose cause carries a system code (ECONNREFUSED, …).
  const cause = error instanceof Error ? (error.cause as { code?: unknown } | undefined) : undefined
  const code = typeof cause?.code === 'string' && /^[A-Z][A-Z0-9_]*$/.test(cause.code) ? ` (${cause.code})` : ''
  return `request failed${code}`
}
