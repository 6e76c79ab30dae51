import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto'
import type { DecisionLinkAction } from '@interlude/protocol'
import type { NewOutboxDelivery } from '../store/store.ts'
import { clientThreadId } from '../store/thread-key.ts'
import type { OpenedBatch } from './webhook-outbox.ts'

/**
 * Slack Block Kit messages (docs/approvals.md#slack): the approval posted to an incoming webhook when a batch opens,
 * with Approve and Deny buttons, and the message that replaces it once decided.
 */

/** A Slack message as posted: fallback `text` and Block Kit `blocks`. */
export interface SlackMessage {
  readonly text: string
  readonly blocks: readonly Record<string, unknown>[]
  readonly replace_original?: boolean
  readonly response_type?: 'ephemeral' | 'in_channel'
}

/** What a button's `value` names: the thread (the store's key), an interrupt of the batch, the action. */
export interface SlackButtonValue {
  readonly threadId: string
  readonly interruptId: string
  readonly action: DecisionLinkAction
}

/** The `action_id` of the two buttons; the route accepts no other. */
export const SLACK_ACTION_IDS: Readonly<Record<DecisionLinkAction, string>> = {
  approve: 'interlude_approve',
  deny: 'interlude_deny',
}

/** Slack's limit for a section's text is 3,000 characters; arguments beyond this are cut. */
const MAX_ARGS_CHARS = 2_500

/** Slack's mrkdwn reserves `&`, `<` and `>` (links, mentions); everything shown is escaped. */
export function slackEscape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
}

const BUTTON_KEY_LABEL = 'interlude/slack-buttons/v1'

/**
 * The key that signs button values, derived from the Slack app's signing secret (which every replica has): an HMAC
 * under a label of its own, so a button's mac never stands for a request signature or a decision link's.
 */
export function slackButtonKey(signingSecret: string): Buffer {
  return createHmac('sha256', signingSecret).update(BUTTON_KEY_LABEL).digest()
}

function buttonMac(key: Buffer, t: string, i: string, a: DecisionLinkAction): Buffer {
  return createHmac('sha256', key)
    .update(JSON.stringify([t, i, a]))
    .digest()
}

/**
 * A button's `value`: the thread, the interrupt and the action, and their mac (`m`), so a button that this server did
 * not post (someone else posting to the incoming webhook) decides nothing, whoever clicks it.
 */
export function buttonValue(key: Buffer, value: SlackButtonValue): string {
  const { threadId: t, interruptId: i, action: a } = value
  return JSON.stringify({ t, i, a, m: buttonMac(key, t, i, a).toString('base64url') })
}

/** The value of a button this server posted (its mac checked in constant time), or `undefined`. */
export function parseButtonValue(key: Buffer, text: unknown): SlackButtonValue | undefined {
  if (typeof text !== 'string' || text.length > 2_000) return undefined
  let raw: unknown
  try {
    raw = JSON.parse(text)
  } catch {
    return undefined
  }
  if (typeof raw !== 'object' || raw === null) return undefined
  const { t, i, a, m } = raw as Record<string, unknown>
  if (typeof t !== 'string' || t === '' || typeof i !== 'string' || i === '') return undefined
  if ((a !== 'approve' && a !== 'deny') || typeof m !== 'string') return undefined
  const expected = buttonMac(key, t, i, a)
  const given = Buffer.from(m, 'base64url')
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined
  return { threadId: t, interruptId: i, action: a }
}

/**
 * At most `max` characters of already escaped text: Slack refuses a section over 3,000 (`invalid_blocks`), and
 * escaping can make text five times longer, so the cut comes after it — never inside an entity such as `&lt;`.
 */
function cut(escaped: string, max: number): string {
  return escaped.length <= max ? escaped : `${escaped.slice(0, max).replace(/&[a-z]*$/, '')}\n…`
}

function argumentsText(args: unknown): string {
  return `\`\`\`${cut(slackEscape(JSON.stringify(args, null, 2) ?? 'null'), MAX_ARGS_CHARS)}\`\`\``
}

const plain = (text: string) => ({ type: 'plain_text', text, emoji: false })
const mrkdwn = (text: string) => ({ type: 'mrkdwn', text })

/** The approval message of a batch: each call (tool, message, arguments), who asked, the deadline, two buttons. */
export function slackApprovalMessage(key: Buffer, batch: OpenedBatch): SlackMessage {
  const first = batch.stored[0]!.interrupt.id
  const tools = [...new Set(batch.stored.map((s) => s.toolName))].join(', ')
  const calls = batch.stored.flatMap(({ toolName, interrupt }) => [
    {
      type: 'section',
      text: mrkdwn(
        `*${cut(slackEscape(toolName), 200)}*\n${cut(slackEscape(interrupt.message ?? ''), MAX_ARGS_CHARS)}`,
      ),
    },
    { type: 'section', text: mrkdwn(argumentsText(interrupt.metadata?.arguments ?? null)) },
  ])
  const button = (action: DecisionLinkAction, label: string, style: 'primary' | 'danger') => ({
    type: 'button',
    action_id: SLACK_ACTION_IDS[action],
    text: plain(label),
    style,
    value: buttonValue(key, { threadId: batch.threadId, interruptId: first, action }),
  })
  const thread = slackEscape(clientThreadId(batch.threadId))
  const expires = new Date(batch.expiresAt).toISOString()
  return {
    text: `Approval needed: ${tools} (asked by ${batch.owner})`,
    blocks: [
      { type: 'header', text: plain('Approval needed') },
      ...calls,
      { type: 'context', elements: [mrkdwn(`Thread ${thread} of ${slackEscape(batch.owner)} · expires ${expires}`)] },
      {
        type: 'actions',
        block_id: 'interlude_decision',
        elements: [button('approve', 'Approve', 'primary'), button('deny', 'Deny', 'danger')],
      },
    ],
  }
}

/**
 * The decided message: the original blocks without their buttons, and the outcome in their place
 * (`replace_original`, posted to the action's `response_url`).
 */
export function slackOutcomeMessage(original: readonly unknown[] | undefined, outcome: string): SlackMessage {
  const kept = (original ?? []).filter(
    (block): block is Record<string, unknown> =>
      typeof block === 'object' && block !== null && (block as Record<string, unknown>).type !== 'actions',
  )
  return {
    replace_original: true,
    text: outcome,
    blocks: [...kept, { type: 'section', text: mrkdwn(slackEscape(outcome)) }],
  }
}

/** The outbox row that posts a batch's approval message to the incoming webhook, written with the batch. */
export function slackOutboxRow(webhookUrl: string, key: Buffer, batch: OpenedBatch): NewOutboxDelivery {
  return {
    deliveryId: `msg_${randomUUID()}`,
    endpoint: webhookUrl,
    eventType: 'interrupt.opened',
    payload: JSON.stringify(slackApprovalMessage(key, batch)),
  }
}
