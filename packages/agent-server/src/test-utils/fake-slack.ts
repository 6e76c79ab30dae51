import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { slackSignature } from '../auth/slack-signature.ts'

/** One request Slack's side received: an incoming-webhook post, or a `response_url` update. */
export interface SlackPost {
  readonly path: string
  readonly headers: http.IncomingHttpHeaders
  readonly body: Record<string, unknown>
}

/**
 * A local stand-in for Slack on 127.0.0.1 (no real Slack is reachable in tests): it records what the server posts to
 * its incoming webhook (`webhookUrl`) and to a click's `response_url` (`responseUrl`), and builds the signed
 * `block_actions` requests Slack would send when a user clicks a button.
 */
export interface FakeSlack {
  readonly origin: string
  readonly webhookUrl: string
  readonly responseUrl: string
  readonly posts: SlackPost[]
  /** The posts to one path (`/services/…` or `/actions/…`). */
  postsTo(path: string): SlackPost[]
  close(): Promise<void>
}

export async function startFakeSlack(): Promise<FakeSlack> {
  const posts: SlackPost[] = []
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8')
      posts.push({ path: req.url ?? '', headers: req.headers, body: JSON.parse(text) as Record<string, unknown> })
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    origin,
    webhookUrl: `${origin}/services/T0001/B0001/incoming-secret`,
    responseUrl: `${origin}/actions/T0001/1/response-secret`,
    posts,
    postsTo: (path) => posts.filter((p) => p.path.startsWith(path)),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

/** A click as Slack posts it: form-encoded `payload`, with `X-Slack-Request-Timestamp` and a v0 signature. */
export function slackClick(
  secret: string,
  click: {
    readonly userId: string
    readonly actionId: string
    readonly value: string
    readonly responseUrl: string
    readonly blocks?: readonly unknown[]
    readonly timestamp?: number
  },
): { headers: Record<string, string>; body: string } {
  const payload = {
    type: 'block_actions',
    user: { id: click.userId, username: click.userId.toLowerCase() },
    api_app_id: 'A0001',
    container: { type: 'message', message_ts: '1.1' },
    response_url: click.responseUrl,
    message: { type: 'message', text: 'Approval needed', blocks: click.blocks ?? [] },
    actions: [{ type: 'button', action_id: click.actionId, block_id: 'interlude_decision', value: click.value }],
  }
  const body = new URLSearchParams({ payload: JSON.stringify(payload) }).toString()
  const timestamp = String(click.timestamp ?? Math.floor(Date.now() / 1000))
  return {
    body,
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'x-slack-request-timestamp': timestamp,
      'x-slack-signature': slackSignature(secret, timestamp, body),
    },
  }
}
