import type { Hono } from 'hono'
import { InterludeError } from '@interlude/protocol'
import { verifySlackRequest } from '../../auth/slack-signature.ts'
import type { Clock } from '../../clock.ts'
import type { SlackConfig } from '../../config/outside-options.ts'
import type { OutsideDecisions, OutsideOutcome } from '../../core/admission/outside-decisions.ts'
import type { SlackButtonValue, SlackMessage } from '../../webhooks/slack-message.ts'
import { parseButtonValue, SLACK_ACTION_IDS, slackOutcomeMessage } from '../../webhooks/slack-message.ts'
import type { ServerEnv } from '../env.ts'
import { redactedUrl } from '../../webhooks/webhook-config.ts'

export interface SlackRouteDeps {
  readonly slack: SlackConfig
  readonly outside: OutsideDecisions
  readonly now: Clock
  /** The largest body read (`limits.maxBodyBytes`). */
  readonly maxBodyBytes: number
  readonly logError: (message: string, error: unknown) => void
  /** @default globalThis.fetch */
  readonly fetch?: typeof fetch | undefined
}

/** A click on one of this server's buttons, as a `block_actions` payload carries it. */
interface SlackClick {
  readonly userId: string
  readonly value: SlackButtonValue
  readonly responseUrl: string | undefined
  readonly blocks: readonly unknown[] | undefined
}

const OUR_ACTIONS = new Set(Object.values(SLACK_ACTION_IDS))
const invalid = (what: string) =>
  new InterludeError('INVALID_INPUT', `Not a Slack block action of this server: ${what}.`)

/**
 * The form's `payload` (JSON), refused unless it is a `block_actions` click on one of this server's buttons: a button
 * whose value's mac is wrong (one this server did not post) is refused like any other.
 */
export function parseSlackClick(buttonKey: Buffer, body: string): SlackClick {
  const text = new URLSearchParams(body).get('payload')
  if (text === null) throw invalid('no payload')
  let payload: Record<string, unknown>
  try {
    payload = JSON.parse(text) as Record<string, unknown>
  } catch {
    throw invalid('payload is not JSON')
  }
  if (typeof payload !== 'object' || payload === null || payload.type !== 'block_actions') throw invalid('type')
  const user = payload.user as Record<string, unknown> | undefined
  if (typeof user?.id !== 'string') throw invalid('user')
  const actions = Array.isArray(payload.actions) ? (payload.actions as Record<string, unknown>[]) : []
  const action = actions.find((a) => typeof a === 'object' && a !== null && OUR_ACTIONS.has(a.action_id as string))
  const value = parseButtonValue(buttonKey, action?.value)
  if (value === undefined || SLACK_ACTION_IDS[value.action] !== action?.action_id) throw invalid('action')
  const responseUrl = typeof payload.response_url === 'string' ? payload.response_url : undefined
  const message = payload.message as Record<string, unknown> | undefined
  const blocks = Array.isArray(message?.blocks) ? (message.blocks as unknown[]) : undefined
  return { userId: user.id, value, responseUrl, blocks }
}

/** What replaces the message (or, for a person who may not decide, what only they see). */
function answer(outcome: OutsideOutcome, principal: string, blocks: readonly unknown[] | undefined): SlackMessage {
  switch (outcome.kind) {
    case 'decided':
      return slackOutcomeMessage(blocks, `${outcome.action === 'approve' ? 'Approved' : 'Denied'} by ${principal}.`)
    case 'voted': {
      const missing = outcome.pending.map((p) => `${p.approvals} of ${p.quorum} approvals`).join(', ')
      const verb = outcome.action === 'approve' ? 'approved' : 'denied'
      // The buttons stay: the others still vote on this message.
      return {
        replace_original: false,
        response_type: 'in_channel',
        text: `${principal} ${verb}; waiting (${missing}).`,
        blocks: [],
      }
    }
    case 'already_voted':
      return {
        response_type: 'ephemeral',
        replace_original: false,
        text: 'You already voted on this request.',
        blocks: [],
      }
    case 'gone': {
      if (outcome.why === 'expired') return slackOutcomeMessage(blocks, 'This request expired.')
      const by = outcome.record ? ` by ${outcome.record.decidedBy} (${outcome.record.via})` : ''
      return slackOutcomeMessage(blocks, `Already decided${by}.`)
    }
    default:
      return {
        response_type: 'ephemeral',
        replace_original: false,
        text: 'You may not decide this request.',
        blocks: [],
      }
  }
}

/**
 * Slack interactivity (docs/approvals.md#slack): `POST {base}/integrations/slack/actions` takes a click on an
 * Approve/Deny button. Slack's v0 signature (five-minute window) is checked on the raw body before anything is read;
 * the Slack user must map to a principal. Then the click decides through the one admission (`via: 'slack'`), the
 * request is acknowledged with `200`, and the message is replaced through the payload's `response_url` (Slack's way
 * for `block_actions`): the buttons give way to the outcome. A refused request (`401`) changes nothing.
 */
export function registerSlackRoutes(app: Hono<ServerEnv>, basePath: string, deps: SlackRouteDeps): void {
  const { slack, outside, now, maxBodyBytes, logError } = deps
  const send = deps.fetch ?? globalThis.fetch

  async function respond(url: string, message: SlackMessage): Promise<void> {
    // Only Slack's own origin (or the configured incoming webhook's) is ever called.
    if (new URL(url).origin !== slack.responseOrigin)
      return logError('slack response_url on another origin', redactedUrl(url))
    const response = await send(url, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(message),
      signal: AbortSignal.timeout(10_000),
    })
    await response.body?.cancel()
    if (!response.ok) logError('slack response_url refused the update', { status: response.status })
  }

  app.post(`${basePath}/integrations/slack/actions`, async (c) => {
    if (Number(c.req.header('content-length') ?? 0) > maxBodyBytes) throw tooLarge(maxBodyBytes)
    const body = await c.req.text()
    if (Buffer.byteLength(body, 'utf8') > maxBodyBytes) throw tooLarge(maxBodyBytes)
    const signed = {
      timestamp: c.req.header('x-slack-request-timestamp'),
      signature: c.req.header('x-slack-signature'),
      body,
    }
    if (!verifySlackRequest(slack.signingSecret, signed, now()))
      throw new InterludeError('UNAUTHENTICATED', 'The request does not carry a valid Slack signature.')
    const click = parseSlackClick(slack.buttonKey, body)
    const principal = slack.users.get(click.userId)
    if (principal === undefined)
      throw new InterludeError('UNAUTHENTICATED', 'This Slack user is not mapped to a principal.')
    const outcome = await outside.decide({ ...click.value, decider: principal }, 'slack')
    if (click.responseUrl !== undefined) {
      const url = click.responseUrl
      respond(url, answer(outcome, principal, click.blocks)).catch((error: unknown) =>
        logError('slack response_url failed', error),
      )
    }
    return c.body(null, 200)
  })
}

function tooLarge(max: number): InterludeError {
  return new InterludeError('PAYLOAD_TOO_LARGE', `The request body is larger than ${max} bytes.`, {
    details: { limit: 'maxBodyBytes', max },
  })
}
