import { randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import type { WebhookPayload } from '@interlude/protocol'
import { outboxEntries } from './outbox-entries.ts'
import { resolveWebhookEndpoints } from './webhook-config.ts'

const secret = `whsec_${randomBytes(32).toString('base64')}`
const endpoints = resolveWebhookEndpoints(
  [
    { url: 'https://a.example/hooks', secret },
    { url: 'https://b.example/hooks', secret, events: ['run.failed'] },
  ],
  {},
)
const data = { threadId: 't1', owner: 'alice', runId: 'r1' }

describe('outboxEntries', () => {
  it('writes one delivery per subscribed endpoint, each with its own msg_ id and the same body', () => {
    const now = Date.UTC(2030, 0, 2, 3, 4, 5, 6)
    const rows = outboxEntries(endpoints, 'run.failed', { ...data, errorCode: 'RUN_FAILED' }, now)
    expect(rows.map((row) => row.endpoint)).toEqual(['https://a.example/hooks', 'https://b.example/hooks'])
    expect(rows.every((row) => /^msg_[0-9a-f-]{36}$/.test(row.deliveryId))).toBe(true)
    expect(new Set(rows.map((row) => row.deliveryId)).size).toBe(2)
    const body: WebhookPayload = {
      type: 'run.failed',
      timestamp: '2030-01-02T03:04:05.006Z',
      data: { threadId: 't1', owner: 'alice', runId: 'r1', errorCode: 'RUN_FAILED' },
    }
    for (const row of rows) {
      expect(row.eventType).toBe('run.failed')
      expect(row.payload).toBe(JSON.stringify(body))
    }
  })

  it('skips endpoints not subscribed to the type, and writes nothing without subscribers', () => {
    expect(outboxEntries(endpoints, 'interrupt.opened', data, 0).map((row) => row.endpoint)).toEqual([
      'https://a.example/hooks',
    ])
    expect(outboxEntries([], 'interrupt.opened', data, 0)).toEqual([])
  })
})
