import { createHmac, timingSafeEqual } from 'node:crypto'

/** Slack's window for a request's timestamp: older (or further ahead) is refused as a possible replay. */
export const SLACK_MAX_SKEW_SECONDS = 5 * 60

export interface SlackSignedRequest {
  /** `X-Slack-Request-Timestamp`: Unix seconds. */
  readonly timestamp: string | undefined
  /** `X-Slack-Signature`: `v0=<hex>`. */
  readonly signature: string | undefined
  /** The raw body, exactly as received. */
  readonly body: string
}

/** Slack's v0 signature of a request: `v0=` + hex HMAC-SHA256(secret, `v0:<timestamp>:<body>`). */
export function slackSignature(secret: string, timestamp: string, body: string): string {
  return `v0=${createHmac('sha256', secret).update(`v0:${timestamp}:${body}`).digest('hex')}`
}

/**
 * Whether a request comes from Slack (docs/approvals.md#slack): a timestamp within five minutes of `nowMs`, and a v0
 * signature that matches, compared in constant time. Anything missing or malformed is `false`.
 */
export function verifySlackRequest(secret: string, request: SlackSignedRequest, nowMs: number): boolean {
  const { timestamp, signature, body } = request
  if (timestamp === undefined || signature === undefined || !/^\d{1,12}$/.test(timestamp)) return false
  if (Math.abs(nowMs / 1000 - Number(timestamp)) > SLACK_MAX_SKEW_SECONDS) return false
  const expected = Buffer.from(slackSignature(secret, timestamp, body), 'utf8')
  const given = Buffer.from(signature, 'utf8')
  return given.length === expected.length && timingSafeEqual(given, expected)
}
