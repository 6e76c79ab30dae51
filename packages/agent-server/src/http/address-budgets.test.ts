import { afterEach, describe, expect, it } from 'vitest'
import { authHeader, newThreadId, runInput, startTestServer, userMessage } from '../test-utils/harness.ts'
import type { TestServer } from '../test-utils/harness.ts'
import { gatedModel } from '../test-utils/test-agents.ts'

/**
 * Budgets per client address over a real HTTP server on 127.0.0.1 (docs/protocol.md#limits): failed
 * authentications, and anonymous principals that share their address's budgets. Every loop is bounded in count.
 */
const servers: TestServer[] = []
afterEach(async () => {
  for (const s of servers.splice(0)) await s.dispose()
})

async function started(options: Parameters<typeof startTestServer>[0]): Promise<TestServer> {
  const s = await startTestServer(options)
  servers.push(s)
  return s
}

describe('failed authentication is rate-limited per address', () => {
  it('wrong bearer tokens get 401 up to the budget, then 429 with Retry-After; a valid token still passes', async () => {
    const s = await started({ limits: { maxFailedAuthPerMinute: 5 } })
    const statuses: number[] = []
    let retryAfter: string | null = null
    for (let i = 0; i < 20; i++) {
      const r = await fetch(`${s.baseUrl}/threads`, { headers: { Authorization: `Bearer wrong-${i}` } })
      statuses.push(r.status)
      if (r.status === 429) retryAfter = r.headers.get('retry-after')
      await r.body?.cancel()
    }
    expect(statuses.slice(0, 5)).toEqual([401, 401, 401, 401, 401])
    expect(statuses.slice(5).every((status) => status === 429)).toBe(true)
    expect(Number(retryAfter)).toBeGreaterThanOrEqual(1)
    const ok = await fetch(`${s.baseUrl}/threads`, { headers: authHeader('alice') })
    expect(ok.status).toBe(200)
    await ok.body?.cancel()
  })
})

describe('anonymous principals share per-address budgets', () => {
  const anonymous = { tokens: undefined, sessionSecret: 'a-long-enough-test-secret' }

  it('new sessions from one address are limited per minute (no cookie: a new principal each time)', async () => {
    const s = await started({ ...anonymous, limits: { maxAnonymousSessionsPerMinute: 5 } })
    const statuses: number[] = []
    for (let i = 0; i < 20; i++) {
      const r = await fetch(`${s.baseUrl}/threads`)
      statuses.push(r.status)
      if (r.status === 429) expect(r.headers.get('set-cookie')).toBeNull()
      await r.body?.cancel()
    }
    expect(statuses.filter((status) => status === 200)).toHaveLength(5)
    expect(statuses.filter((status) => status === 429)).toHaveLength(15)
  })

  it('open streams of all anonymous sessions of one address count against one budget', async () => {
    const gate = gatedModel()
    const s = await started({
      ...anonymous,
      agent: { model: gate.model },
      limits: { maxOpenStreamsPerPrincipal: 2, maxAnonymousSessionsPerMinute: 100 },
    })
    const controllers: AbortController[] = []
    const statuses: number[] = []
    try {
      for (let i = 0; i < 5; i++) {
        const controller = new AbortController()
        controllers.push(controller)
        const r = await fetch(`${s.baseUrl}/runs`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify(runInput(newThreadId(), [userMessage('hi')])),
          signal: controller.signal,
        })
        statuses.push(r.status)
        if (r.status !== 200) await r.body?.cancel()
      }
    } finally {
      gate.release()
      for (const c of controllers) c.abort()
    }
    expect(statuses).toEqual([200, 200, 429, 429, 429])
  })
})
