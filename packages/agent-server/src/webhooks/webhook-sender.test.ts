import { createHmac, randomBytes } from 'node:crypto'
import { afterEach, describe, expect, it } from 'vitest'
import type { OutboxSettlement, Store } from '../store/store.ts'
import { createSqliteStore } from '../store/sqlite/sqlite-store.ts'
import { until } from '../test-utils/child-server.ts'
import { tempDir } from '../test-utils/harness.ts'
import { commitFailedRun } from '../test-utils/webhook-outbox.ts'
import type { WebhookReceiver } from '../test-utils/webhook-receiver.ts'
import { freePort, startWebhookReceiver } from '../test-utils/webhook-receiver.ts'
import type { ResolvedWebhookEndpoint } from './webhook-config.ts'
import { resolveWebhookEndpoints } from './webhook-config.ts'
import type { WebhookSenderOptions } from './webhook-sender.ts'
import { WebhookSender } from './webhook-sender.ts'

const secret = `whsec_${randomBytes(32).toString('base64')}`
const cleanups: (() => unknown)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

/** A real SQLite file, closed and removed after the test. */
function sqlite(): { store: Store; dbPath: string } {
  const tmp = tempDir()
  const store = createSqliteStore(tmp.dbPath)
  cleanups.push(tmp.cleanup, () => store.close())
  return { store, dbPath: tmp.dbPath }
}

async function receiver(port?: number): Promise<WebhookReceiver> {
  const r = await startWebhookReceiver(secret, port)
  cleanups.push(() => r.close())
  return r
}

function endpointsFor(...urls: string[]): ResolvedWebhookEndpoint[] {
  return resolveWebhookEndpoints(
    urls.map((url) => ({ url, secret })),
    {},
  )
}

interface Logged {
  readonly message: string
  readonly error: unknown
}

/** A started sender whose settlements and log lines the test can read; stopped after the test. */
function sender(store: Store, options: Partial<WebhookSenderOptions> & Pick<WebhookSenderOptions, 'endpoints'>) {
  const settlements: { settlement: OutboxSettlement; at: number }[] = []
  const logged: Logged[] = []
  const s = new WebhookSender({
    store: {
      claimOutbox: (request) => store.claimOutbox(request),
      // Observes the real store's settle; `at` is taken in the same tick the sender computed `nextAttemptAt`.
      settleOutbox: (settlement) => {
        settlements.push({ settlement, at: Date.now() })
        return store.settleOutbox(settlement)
      },
    },
    logError: (message, error) => logged.push({ message, error }),
    pollMs: 20,
    ...options,
  })
  s.start()
  cleanups.push(() => s.stop())
  return { sender: s, settlements, logged }
}

const statusOf = async (store: Store, deliveryId: string) =>
  (await store.listOutbox()).find((row) => row.deliveryId === deliveryId)

describe('WebhookSender', () => {
  it('POSTs each stored body byte for byte with Standard Webhooks headers that verify', async () => {
    const { store } = sqlite()
    const a = await receiver()
    const b = await receiver()
    const endpoints = endpointsFor(a.url, b.url)
    const rows = [...(await commitFailedRun(store, endpoints)), ...(await commitFailedRun(store, endpoints))]
    const { sender: s } = sender(store, { endpoints })
    s.wake()
    await until(async () => (await store.listOutbox({ status: 'delivered' })).length === 4, 'four deliveries')

    const received = [...a.received, ...b.received]
    expect(received).toHaveLength(4)
    for (const row of rows) {
      const request = received.find((r) => r.headers['webhook-id'] === row.deliveryId)
      expect(request?.verifyError).toBeUndefined()
      expect(request?.method).toBe('POST')
      expect(request?.path).toBe('/hooks')
      expect(request?.headers['content-type']).toBe('application/json')
      expect(request?.body).toBe(row.payload)
      expect(request?.payload).toEqual(JSON.parse(row.payload))
      expect(request?.headers['webhook-timestamp']).toMatch(/^\d{10}$/)
      // The spec's text, independently of the library: v1,base64(HMAC-SHA256(key, "id.timestamp.body")).
      const signed = `${row.deliveryId}.${String(request?.headers['webhook-timestamp'])}.${row.payload}`
      const hmac = createHmac('sha256', Buffer.from(secret.slice('whsec_'.length), 'base64')).update(signed)
      expect(request?.headers['webhook-signature']).toBe(`v1,${hmac.digest('base64')}`)
      expect((row.endpoint === a.url ? a : b).received).toContain(request)
    }
    for (const row of await store.listOutbox()) expect(row).toMatchObject({ status: 'delivered', attempts: 1 })
  })

  it('retries while the receiver is down, then failing, with growing waits; arrives once it answers 2xx', async () => {
    const { store } = sqlite()
    const port = await freePort()
    const endpoints = endpointsFor(`http://127.0.0.1:${port}/hooks`)
    const rows = [...(await commitFailedRun(store, endpoints)), ...(await commitFailedRun(store, endpoints))]
    const { settlements } = sender(store, { endpoints, retryBaseMs: 40 })
    const retriesOf = (id: string) =>
      settlements.filter(
        (s): s is { settlement: Extract<OutboxSettlement, { outcome: 'retry' }>; at: number } =>
          s.settlement.deliveryId === id && s.settlement.outcome === 'retry',
      )

    // Connection refused: nothing listens on the port yet.
    await until(() => rows.every((row) => retriesOf(row.deliveryId).length >= 2), 'two refused attempts each')
    // Up, but failing twice before it accepts.
    const r = await receiver(port)
    r.answer = (_request, index) => (index < 2 ? 500 : 200)
    await until(async () => (await store.listOutbox({ status: 'delivered' })).length === 2, 'both delivered')

    for (const row of rows) {
      const retries = retriesOf(row.deliveryId)
      expect(retries[0]?.settlement.error).toBe('request failed (ECONNREFUSED)')
      const waits = retries.map((s) => s.settlement.nextAttemptAt - s.at)
      for (let i = 1; i < waits.length; i++) expect(waits[i]).toBeGreaterThan(waits[i - 1] ?? Infinity)
      expect(await statusOf(store, row.deliveryId)).toMatchObject({
        status: 'delivered',
        attempts: retries.length + 1,
      })
    }
    expect(settlements.some((s) => s.settlement.outcome === 'retry' && s.settlement.error === 'HTTP 500')).toBe(true)
    // Duplicates only under a stored id, and each id accepted (2xx) exactly once.
    const ids = new Set(rows.map((row) => row.deliveryId))
    expect(r.received.every((request) => ids.has(String(request.headers['webhook-id'])))).toBe(true)
    expect(r.received.every((request) => request.verifyError === undefined)).toBe(true)
    expect(r.received.slice(2).map((request) => request.headers['webhook-id'])).toHaveLength(2)
    expect(new Set(r.received.slice(2).map((request) => request.headers['webhook-id']))).toEqual(ids)
  })

  it('a restart continues where the outbox stands: locked rows are sent by a new sender after the lock ends', async () => {
    const { store, dbPath } = sqlite()
    const r = await receiver()
    r.answer = () => 'hold'
    const endpoints = endpointsFor(r.url)
    const rows = []
    for (let i = 0; i < 5; i++) rows.push(...(await commitFailedRun(store, endpoints)))
    const first = sender(store, { endpoints, executorId: 'exec_first', stopTimeoutMs: 50 })
    first.sender.wake()
    await until(() => r.received.length === 5, 'five requests held by the receiver')
    // Stopped mid-request: the requests are aborted and the rows stay locked, unsettled.
    await first.sender.stop()
    expect(first.settlements).toEqual([])
    const locked = await store.listOutbox()
    expect(locked.map((row) => [row.status, row.lockedBy, row.attempts])).toEqual(
      rows.map(() => ['pending', 'exec_first', 0]),
    )

    // A new process on the same file: nothing is claimable while the lock lasts, everything once it ends.
    const restarted = createSqliteStore(dbPath)
    cleanups.push(() => restarted.close())
    const lockEnd = Math.max(...locked.map((row) => row.lockedUntil ?? 0))
    expect(
      await restarted.claimOutbox({ executorId: 'probe', now: lockEnd - 1, lockUntil: lockEnd, limit: 50 }),
    ).toEqual([])
    r.answer = () => 200
    const offset = lockEnd + 1 - Date.now()
    const second = sender(restarted, { endpoints, executorId: 'exec_second', now: () => Date.now() + offset })
    second.sender.wake()
    await until(async () => (await restarted.listOutbox({ status: 'delivered' })).length === 5, 'all five delivered')

    // Each id arrived twice (held, then accepted), never under another id.
    const counts = r.countsById()
    expect([...counts.keys()].sort()).toEqual(rows.map((row) => row.deliveryId).sort())
    expect([...counts.values()]).toEqual([2, 2, 2, 2, 2])
    expect(r.received.every((request) => request.verifyError === undefined)).toBe(true)
  })

  it('after maxAttempts a delivery is failed, logged once and never sent again', async () => {
    const { store } = sqlite()
    const r = await receiver()
    r.answer = (request) => (request.headers['webhook-id'] === doomed?.deliveryId ? 500 : 200)
    const endpoints = endpointsFor(r.url)
    const [doomed] = await commitFailedRun(store, endpoints)
    const { sender: s, logged } = sender(store, { endpoints, maxAttempts: 3, retryBaseMs: 10 })
    s.wake()
    await until(async () => (await statusOf(store, doomed?.deliveryId ?? ''))?.status === 'failed', 'failed')
    expect(await statusOf(store, doomed?.deliveryId ?? '')).toMatchObject({ attempts: 3, lastError: 'HTTP 500' })

    // Later rounds run (a later delivery arrives) and never pick the failed one up again.
    const [later] = await commitFailedRun(store, endpoints)
    s.wake()
    await until(async () => (await statusOf(store, later?.deliveryId ?? ''))?.status === 'delivered', 'later delivered')
    expect(r.countsById().get(doomed?.deliveryId ?? '')).toBe(3)
    expect(logged).toEqual([
      {
        message: 'webhook delivery failed',
        error: {
          deliveryId: doomed?.deliveryId,
          endpoint: r.url,
          eventType: 'run.failed',
          attempts: 3,
          error: 'HTTP 500',
        },
      },
    ])
    expect(JSON.stringify(logged)).not.toContain(secret.slice('whsec_'.length, 20))
  })

  it('never calls a URL that is not configured, and does not follow redirects', async () => {
    const { store } = sqlite()
    const r = await receiver()
    r.answer = (request) => (request.path === '/hooks' ? { status: 307, headers: { location: '/followed' } } : 200)
    const configured = endpointsFor(r.url)
    // Written while a second endpoint (on the same receiver, so a call would be seen) was configured.
    const removed = endpointsFor(`http://127.0.0.1:${r.port}/removed`)
    const [redirected] = await commitFailedRun(store, configured)
    const [orphan] = await commitFailedRun(store, removed)
    const { sender: s, logged } = sender(store, { endpoints: configured, maxAttempts: 2, retryBaseMs: 10 })
    s.wake()
    await until(async () => (await store.listOutbox({ status: 'failed' })).length === 2, 'both failed')
    expect(await statusOf(store, orphan?.deliveryId ?? '')).toMatchObject({
      attempts: 1,
      lastError: 'endpoint not configured',
    })
    expect(await statusOf(store, redirected?.deliveryId ?? '')).toMatchObject({
      attempts: 2,
      lastError: 'HTTP 307 (redirects are not followed)',
    })
    expect(r.received.map((request) => request.path)).toEqual(['/hooks', '/hooks'])
    expect(logged.map((line) => line.message)).toEqual(['webhook delivery failed', 'webhook delivery failed'])
  })

  it('keeps at most `concurrency` requests in flight and carries on when every slot was busy', async () => {
    const { store } = sqlite()
    const r = await receiver()
    r.answer = () => 'hold'
    const endpoints = endpointsFor(r.url)
    for (let i = 0; i < 3; i++) await commitFailedRun(store, endpoints)
    const { sender: s } = sender(store, { endpoints, concurrency: 2, pollMs: 5 })
    s.wake()
    await until(() => r.received.length === 2, 'two requests in flight')
    // Polls come and go while both slots are busy (a wait for them, not an assertion on time).
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(r.received).toHaveLength(2)
    r.answer = () => 200
    r.release()
    await until(async () => (await store.listOutbox({ status: 'delivered' })).length === 3, 'all three delivered')
  })

  it('bounds each request by timeoutMs', async () => {
    const { store } = sqlite()
    const r = await receiver()
    r.answer = () => 'hold'
    const endpoints = endpointsFor(r.url)
    const [row] = await commitFailedRun(store, endpoints)
    const { sender: s } = sender(store, { endpoints, timeoutMs: 100, lockMs: 1000, maxAttempts: 1 })
    s.wake()
    await until(async () => (await statusOf(store, row?.deliveryId ?? ''))?.status === 'failed', 'failed')
    expect(await statusOf(store, row?.deliveryId ?? '')).toMatchObject({ lastError: 'no answer within 100 ms' })
  })

  it('refuses options that could let two senders send one row at once', () => {
    const { store } = sqlite()
    expect(() => new WebhookSender({ store, endpoints: [], logError: () => undefined, timeoutMs: 20_000 })).toThrow(
      'lockMs must be at least 2 × timeoutMs.',
    )
    expect(() => new WebhookSender({ store, endpoints: [], logError: () => undefined, concurrency: 0 })).toThrow(
      RangeError,
    )
  })
})
