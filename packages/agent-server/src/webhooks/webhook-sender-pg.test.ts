import { randomBytes } from 'node:crypto'
import { afterAll, describe, expect, it } from 'vitest'
import type { Store } from '../store/store.ts'
import { createPostgresStore } from '../store/postgres/postgres-store.ts'
import { until } from '../test-utils/child-server.ts'
import { createTestSchema, PG_URL, pgAvailable } from '../test-utils/pg.ts'
import { commitFailedRun } from '../test-utils/webhook-outbox.ts'
import { startWebhookReceiver } from '../test-utils/webhook-receiver.ts'
import { resolveWebhookEndpoints } from './webhook-config.ts'
import { WebhookSender } from './webhook-sender.ts'

const available = await pgAvailable('webhook sender on PostgreSQL')
const secret = `whsec_${randomBytes(32).toString('base64')}`
const cleanups: (() => unknown)[] = []
afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

describe.skipIf(!available)('WebhookSender on PostgreSQL', () => {
  it('two senders on two store instances over one schema send each of 50 rows once', async () => {
    const { schema, drop } = await createTestSchema()
    cleanups.push(drop)
    const open = async () => {
      const store = await createPostgresStore({ connectionString: PG_URL, schema, max: 4, admissionMax: 2 })
      cleanups.push(() => store.close())
      return store
    }
    const [one, two] = [await open(), await open()]
    const receiver = await startWebhookReceiver(secret)
    cleanups.push(() => receiver.close())
    const endpoints = resolveWebhookEndpoints([{ url: receiver.url, secret }], {})

    const rows = []
    for (let i = 0; i < 50; i++) rows.push(...(await commitFailedRun(i % 2 === 0 ? one : two, endpoints)))
    const logged: unknown[] = []
    const settledBy = [0, 0]
    const senders = [one, two].map((store: Store, i) => {
      const sender = new WebhookSender({
        store: {
          claimOutbox: (request) => store.claimOutbox(request),
          settleOutbox: async (settlement) => {
            const settled = await store.settleOutbox(settlement)
            if (settled) settledBy[i] = (settledBy[i] ?? 0) + 1
            return settled
          },
        },
        endpoints,
        executorId: `exec_${i}`,
        // Small claims and concurrency so the two senders interleave over many rounds.
        concurrency: 4,
        pollMs: 10,
        logError: (message, error) => logged.push({ message, error }),
      })
      cleanups.push(() => sender.stop())
      return sender
    })
    // Both start at once and race for the same due rows.
    for (const sender of senders) sender.start()
    // A settlement is visible in the database before its `settleOutbox` call returns here: wait for both.
    await until(
      async () => settledBy[0]! + settledBy[1]! >= 50 && (await one.listOutbox({ status: 'delivered' })).length === 50,
      '50 delivered and settled',
    )

    const counts = receiver.countsById()
    expect([...counts.keys()].sort()).toEqual(rows.map((row) => row.deliveryId).sort())
    expect([...counts.values()].every((count) => count === 1)).toBe(true)
    expect(receiver.maxConcurrentPerId()).toBe(1)
    expect(receiver.received.every((request) => request.verifyError === undefined)).toBe(true)
    expect(logged).toEqual([])
    // Both took part: the race was real.
    expect(settledBy[0]! + settledBy[1]!).toBe(50)
    expect(Math.min(...settledBy)).toBeGreaterThan(0)
    const delivered = await two.listOutbox()
    expect(delivered.every((row) => row.status === 'delivered' && row.attempts === 1)).toBe(true)
  })
})
