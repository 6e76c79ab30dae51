import { randomBytes } from 'node:crypto'
import type { DecisionLink, WebhookPayload } from '@interlude/protocol'
import { linkKey, signLink } from '../auth/decision-link-token.ts'
import type { LinkClaims } from '../auth/decision-link-token.ts'
import type { ToolDefinition } from '../agent/tool.ts'
import type { StartServerOptions } from '../server.ts'
import { threadKey } from '../store/thread-key.ts'
import { until } from './child-server.ts'
import type { TestServer } from './harness.ts'
import { interruptsOf, newThreadId, postRun, runInput, startTestServer, tempDir, userMessage } from './harness.ts'
import { call, rightsAgent } from './rights-agents.ts'
import type { WebhookReceiver } from './webhook-receiver.ts'
import { freePort, startWebhookReceiver } from './webhook-receiver.ts'

/**
 * A real server deciding outside the app (docs/approvals.md#deciding-outside-the-app): `eng` asks for a `deploy` only
 * `mgr` may approve; `interrupt.opened` goes to a verifying webhook receiver, with decision links on the server's own
 * public URL. `forge` signs claims with the server's link key (for expired links and deciders without the right).
 */
export interface OutsideServer {
  /** The server now (`restart` replaces it). */
  readonly server: TestServer
  readonly receiver: WebhookReceiver
  readonly ran: { principal: string; env: unknown }[]
  /** eng's new paused thread: its client id and key, the interrupt, and the links its webhook carried. */
  pause(
    args?: Record<string, unknown>,
  ): Promise<{ threadId: string; key: string; interruptId: string; links: DecisionLink[] }>
  forge(claims: LinkClaims): string
  /**
   * Stops the server and starts it again on the same database and secrets, with `options` changed, on a new port (a
   * client's pooled connections to the old one are gone): reach it at `server.url`.
   */
  restart(options: Partial<StartServerOptions>): Promise<void>
  close(): Promise<void>
}

/** The `interrupt.opened` delivery of `threadId` (the client's id), once the receiver has it. */
export function openedWebhook(receiver: WebhookReceiver, threadId: string): Promise<WebhookPayload> {
  return until(
    () =>
      receiver.received
        .map((r) => r.payload as WebhookPayload)
        .find((p) => p?.type === 'interrupt.opened' && p.data.threadId === threadId),
    'interrupt.opened',
  )
}

export async function startOutsideServer(
  options: Partial<StartServerOptions> = {},
  /** Changes to the `deploy` tool (`approvers: undefined` removes its approvers). */
  deploy: Readonly<Record<string, unknown>> = {},
): Promise<OutsideServer> {
  const webhookSecret = `whsec_${randomBytes(32).toString('base64')}`
  const sessionSecret = randomBytes(32).toString('base64url')
  const receiver = await startWebhookReceiver(webhookSecret)
  const { agent, ran } = rightsAgent({ deploy: deploy as Partial<ToolDefinition> })
  const port = await freePort()
  const tmp = tempDir()
  const settings: Partial<StartServerOptions> = {
    dbPath: tmp.dbPath,
    port,
    agent,
    approvers: ['mgr'],
    publicUrl: `http://127.0.0.1:${port}`,
    sessionSecret,
    webhooks: [{ url: receiver.url, secret: webhookSecret }],
    webhookDelivery: { pollMs: 20, retryBaseMs: 20, retryMaxMs: 200 },
    ...options,
  }
  let server = await startTestServer(settings)
  const key = linkKey(sessionSecret)
  return {
    get server() {
      return server
    },
    receiver,
    ran,
    async pause(args = { env: 'production' }) {
      const threadId = newThreadId()
      const answer = await postRun(server, runInput(threadId, [userMessage(call('deploy', args))]), {
        principal: 'eng',
      })
      const interruptId = interruptsOf(answer.events)[0]!.id
      const opened = await openedWebhook(receiver, threadId)
      return { threadId, key: threadKey('eng', threadId), interruptId, links: [...(opened.data.links ?? [])] }
    },
    forge: (claims) => signLink(key, claims),
    async restart(changed) {
      await server.close()
      server = await startTestServer({ ...settings, port: await freePort(), ...changed })
    },
    async close() {
      await server.close()
      await receiver.close()
      tmp.cleanup()
    },
  }
}
