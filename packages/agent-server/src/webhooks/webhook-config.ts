import { WEBHOOK_EVENT_TYPES } from '@interlude/protocol'
import type { WebhookEventType } from '@interlude/protocol'
import { Webhook } from 'standardwebhooks'

/**
 * Webhook endpoints as a host configures them (docs/approvals.md, "Webhooks"): `createAgentServer({ webhooks })`,
 * CLI `--webhook <url>`. The secret is the Standard Webhooks signing key, `whsec_<base64>` (a bare base64 key is
 * accepted too); without one here, `INTERLUDE_WEBHOOK_SECRET` is used.
 */
export interface WebhookEndpoint {
  /** Absolute `http:` or `https:` URL; deliveries are POSTed here and redirects are never followed. */
  readonly url: string
  /** `whsec_<base64>` or base64. @default process.env.INTERLUDE_WEBHOOK_SECRET */
  readonly secret?: string
  /** The events this endpoint receives. @default every type of `WEBHOOK_EVENT_TYPES` */
  readonly events?: readonly WebhookEventType[]
}

/** An endpoint after validation: the canonical URL (the outbox row's `endpoint`), its signer and subscriptions. */
export interface ResolvedWebhookEndpoint {
  /** `new URL(url).href`: what outbox rows store and what the sender matches them against. */
  readonly url: string
  readonly events: ReadonlySet<WebhookEventType>
  /** Signs with this endpoint's key (`standardwebhooks`); the key itself is not kept elsewhere. */
  readonly signer: Webhook
}

/**
 * What the sender calls: a Standard Webhooks endpoint, or a Slack incoming webhook, which has no signer (its URL is
 * its secret, and Slack reads no signature: docs/approvals.md#slack).
 */
export type DeliveryEndpoint = Pick<ResolvedWebhookEndpoint, 'url'> & { readonly signer?: Webhook | undefined }

/** The environment variable read for endpoints configured without a secret. */
export const WEBHOOK_SECRET_ENV = 'INTERLUDE_WEBHOOK_SECRET'

/**
 * The Standard Webhooks spec recommends keys of 24 to 64 random bytes; a shorter key is refused because a guessable
 * HMAC key lets anyone forge deliveries. Longer keys are fine for HMAC-SHA256.
 */
export const MIN_WEBHOOK_SECRET_BYTES = 24

const KNOWN_TYPES: ReadonlySet<string> = new Set(WEBHOOK_EVENT_TYPES)

/**
 * Validates endpoints once, at construction, like the server's other options: a misconfiguration throws a
 * `RangeError` that names the option (never the secret, nor the URL, which may carry credentials) instead of
 * failing deliveries later.
 */
export function resolveWebhookEndpoints(
  endpoints: readonly WebhookEndpoint[],
  env: Readonly<Record<string, string | undefined>> = process.env,
): ResolvedWebhookEndpoint[] {
  const seen = new Set<string>()
  return endpoints.map((endpoint, index) => {
    const name = `webhooks[${index}]`
    const url = canonicalUrl(endpoint.url, name)
    // The same URL twice would send every event twice, each under its own webhook-id.
    if (seen.has(url)) throw new RangeError(`${name}.url repeats an earlier endpoint; list each URL once.`)
    seen.add(url)
    return {
      url,
      events: subscriptions(endpoint.events, name),
      signer: signer(endpoint.secret ?? env[WEBHOOK_SECRET_ENV], name),
    }
  })
}

function canonicalUrl(raw: string, name: string): string {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new RangeError(`${name}.url must be an absolute http(s) URL.`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new RangeError(`${name}.url must be an absolute http(s) URL.`)
  }
  // Userinfo is never sent (fetch refuses it) and would sit in every outbox row: authenticate with the secret.
  if (url.username !== '' || url.password !== '')
    throw new RangeError(`${name}.url must not carry credentials (user:password@); the signature authenticates.`)
  return url.href
}

function subscriptions(events: readonly WebhookEventType[] | undefined, name: string): ReadonlySet<WebhookEventType> {
  if (events === undefined) return new Set(WEBHOOK_EVENT_TYPES)
  if (events.length === 0) {
    throw new RangeError(`${name}.events is empty; omit it to receive every event, or name at least one.`)
  }
  for (const type of events) {
    if (!KNOWN_TYPES.has(type)) {
      throw new RangeError(`${name}.events: unknown event type; expected one of ${WEBHOOK_EVENT_TYPES.join(', ')}.`)
    }
  }
  return new Set(events)
}

function signer(secret: string | undefined, name: string): Webhook {
  if (secret === undefined || secret.trim() === '') {
    throw new RangeError(
      `${name} has no signing secret: set its secret or ${WEBHOOK_SECRET_ENV} (a Standard Webhooks key, whsec_<base64>).`,
    )
  }
  let webhook: Webhook
  try {
    webhook = new Webhook(secret.trim())
  } catch {
    // The library's message is not echoed: it is generic, and the secret must never reach a log.
    throw new RangeError(`${name}: the signing secret is not whsec_<base64> or base64.`)
  }
  if (keyLength(secret.trim()) < MIN_WEBHOOK_SECRET_BYTES) {
    throw new RangeError(`${name}: the signing secret must decode to at least ${MIN_WEBHOOK_SECRET_BYTES} bytes.`)
  }
  return webhook
}

/** Decoded length of a `whsec_`/base64 key (the library keeps its key private). */
function keyLength(secret: string): number {
  return Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64').length
}

/** The URL as logs show it: origin and path only, since userinfo and query strings often carry credentials. */
export function redactedUrl(url: string): string {
  try {
    const parsed = new URL(url)
    return `${parsed.origin}${parsed.pathname}`
  } catch {
    return '(invalid URL)'
  }
}
