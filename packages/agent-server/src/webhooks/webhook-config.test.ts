import { randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { WEBHOOK_EVENT_TYPES } from '@interlude/protocol'
import type { WebhookEventType } from '@interlude/protocol'
import { Webhook } from 'standardwebhooks'
import { redactedUrl, resolveWebhookEndpoints } from './webhook-config.ts'

const key = randomBytes(32).toString('base64')
const secret = `whsec_${key}`

describe('resolveWebhookEndpoints', () => {
  it('canonicalizes the URL, subscribes to every event by default and signs like the reference verifier expects', () => {
    const [endpoint] = resolveWebhookEndpoints([{ url: 'HTTPS://Example.COM:443/hooks', secret }], {})
    expect(endpoint?.url).toBe('https://example.com/hooks')
    expect([...(endpoint?.events ?? [])]).toEqual([...WEBHOOK_EVENT_TYPES])
    const at = new Date()
    const body = '{"a":1}'
    const signature = endpoint?.signer.sign('msg_1', at, body) ?? ''
    const headers = {
      'webhook-id': 'msg_1',
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': signature,
    }
    expect(new Webhook(secret).verify(body, headers)).toEqual({ a: 1 })
  })

  it('takes the secret from INTERLUDE_WEBHOOK_SECRET, whsec_ or raw base64, and keeps a subscription list', () => {
    const [fromEnv, raw] = resolveWebhookEndpoints(
      [
        { url: 'http://127.0.0.1:9/a', events: ['run.failed'] },
        { url: 'http://127.0.0.1:9/b', secret: key },
      ],
      { INTERLUDE_WEBHOOK_SECRET: secret },
    )
    expect([...(fromEnv?.events ?? [])]).toEqual(['run.failed'])
    const at = new Date(0)
    expect(fromEnv?.signer.sign('msg_1', at, 'x')).toBe(raw?.signer.sign('msg_1', at, 'x'))
  })

  it('refuses an endpoint without a secret, naming the environment variable', () => {
    expect(() => resolveWebhookEndpoints([{ url: 'https://example.com/h' }], {})).toThrow(
      /webhooks\[0\] has no signing secret: set its secret or INTERLUDE_WEBHOOK_SECRET/,
    )
    expect(() =>
      resolveWebhookEndpoints([{ url: 'https://example.com/h' }], { INTERLUDE_WEBHOOK_SECRET: ' ' }),
    ).toThrow(RangeError)
  })

  it('refuses bad secrets without echoing them', () => {
    for (const bad of ['whsec_!!!not-base64', `whsec_${randomBytes(8).toString('base64')}`]) {
      let message = ''
      try {
        resolveWebhookEndpoints([{ url: 'https://example.com/h', secret: bad }], {})
      } catch (error) {
        expect(error).toBeInstanceOf(RangeError)
        message = (error as Error).message
      }
      expect(message).toMatch(/signing secret/)
      expect(message).not.toContain(bad.slice('whsec_'.length))
    }
  })

  it('refuses URLs that are not absolute http(s), without echoing them', () => {
    for (const url of ['/relative', 'ftp://example.com/x', 'javascript:alert(1)', 'file:///etc/passwd', 'not a url']) {
      expect(() => resolveWebhookEndpoints([{ url, secret }], {})).toThrow(
        'webhooks[0].url must be an absolute http(s) URL.',
      )
    }
  })

  it('refuses a repeated URL, an empty or unknown subscription', () => {
    expect(() =>
      resolveWebhookEndpoints(
        [
          { url: 'https://example.com/h', secret },
          { url: 'https://EXAMPLE.com/h', secret },
        ],
        {},
      ),
    ).toThrow(/webhooks\[1\]\.url repeats/)
    expect(() => resolveWebhookEndpoints([{ url: 'https://example.com/h', secret, events: [] }], {})).toThrow(
      /events is empty/,
    )
    const unknown = ['interrupt.closed'] as unknown as WebhookEventType[]
    expect(() => resolveWebhookEndpoints([{ url: 'https://example.com/h', secret, events: unknown }], {})).toThrow(
      /unknown event type/,
    )
  })
})

describe('redactedUrl', () => {
  it('drops userinfo, query and fragment', () => {
    expect(redactedUrl('https://user:pw@example.com:8443/h/x?token=abc#f')).toBe('https://example.com:8443/h/x')
  })
})
