import { linkKey } from '../auth/decision-link-token.ts'
import { sessionSecretProblem } from '../auth/authenticate.ts'
import { SESSION_SECRET_ENV } from '../auth/session-secret.ts'
import { slackButtonKey } from '../webhooks/slack-message.ts'

/** The environment variable of the Slack app's signing secret. */
export const SLACK_SIGNING_SECRET_ENV = 'INTERLUDE_SLACK_SIGNING_SECRET'

/** Slack (docs/approvals.md#deciding-outside-the-app): buttons that decide, and the messages that carry them. */
export interface SlackOptions {
  /** The Slack app's signing secret. @default process.env.INTERLUDE_SLACK_SIGNING_SECRET */
  readonly signingSecret?: string | undefined
  /** Slack user id → principal: who a click decides as. A user not listed decides nothing. */
  readonly users: Readonly<Record<string, string>>
  /** An incoming-webhook URL: every batch approve/deny can answer is posted there as a Block Kit message. */
  readonly webhookUrl?: string | undefined
}

/** `ServerOptions.publicUrl` and `.linkSecret`, resolved. */
export interface DecisionLinkConfig {
  /** No trailing slash. */
  readonly publicUrl: string
  readonly key: Buffer
}

export interface SlackConfig {
  readonly signingSecret: string
  /** Signs the buttons' values (`slackButtonKey(signingSecret)`). */
  readonly buttonKey: Buffer
  readonly users: ReadonlyMap<string, string>
  /** `new URL(webhookUrl).href`. */
  readonly webhookUrl: string | undefined
  /** The only origin a payload's `response_url` may have: the incoming webhook's, else `https://hooks.slack.com`. */
  readonly responseOrigin: string
}

function httpUrl(raw: string, name: string): URL {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new RangeError(`${name} must be an absolute http(s) URL.`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new RangeError(`${name} must be an absolute http(s) URL.`)
  return url
}

/**
 * Decision links need a public URL and a secret: the `linkSecret` option, else `INTERLUDE_SESSION_SECRET` (`startServer`
 * passes the session secret it resolved, README "Sessions and secrets"). Replicas must share it, as they share sessions.
 */
export function resolveDecisionLinks(
  publicUrl: string | undefined,
  secret: string | undefined,
  env: Readonly<Record<string, string | undefined>> = process.env,
): DecisionLinkConfig | undefined {
  if (publicUrl === undefined) return undefined
  const url = httpUrl(publicUrl, 'publicUrl')
  if (url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '')
    throw new RangeError('publicUrl must be an origin, optionally with a path: no credentials, query or fragment.')
  const key = secret ?? env[SESSION_SECRET_ENV]
  if (key === undefined) throw new RangeError(`Decision links need linkSecret or ${SESSION_SECRET_ENV}.`)
  const problem = sessionSecretProblem(key)
  if (problem !== undefined) throw new RangeError(`The decision links' secret ${problem}.`)
  return { publicUrl: url.href.replace(/\/+$/, ''), key: linkKey(key) }
}

export function resolveSlack(
  options: SlackOptions | undefined,
  env: Readonly<Record<string, string | undefined>> = process.env,
): SlackConfig | undefined {
  if (options === undefined) return undefined
  const signingSecret = options.signingSecret ?? env[SLACK_SIGNING_SECRET_ENV]
  if (signingSecret === undefined || signingSecret.trim() === '')
    throw new RangeError(`slack needs signingSecret or ${SLACK_SIGNING_SECRET_ENV}.`)
  const users = new Map<string, string>()
  for (const [user, principal] of Object.entries(options.users)) {
    if (user === '' || typeof principal !== 'string' || principal === '')
      throw new RangeError('slack.users maps Slack user ids to non-empty principal names.')
    users.set(user, principal)
  }
  const webhook = options.webhookUrl === undefined ? undefined : httpUrl(options.webhookUrl, 'slack.webhookUrl')
  return {
    signingSecret: signingSecret.trim(),
    buttonKey: slackButtonKey(signingSecret.trim()),
    users,
    webhookUrl: webhook?.href,
    responseOrigin: webhook?.origin ?? 'https://hooks.slack.com',
  }
}
