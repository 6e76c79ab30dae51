import { afterAll, describe, expect, it } from 'vitest'
import type { PendingBatchPage } from '@interlude/protocol'
import { createSqliteStore } from '../store/sqlite/sqlite-store.ts'
import type { Store } from '../store/store.ts'
import { getJson } from '../test-utils/decisions.ts'
import { tempDir } from '../test-utils/harness.ts'
import type { InProcessServer } from '../test-utils/in-process.ts'
import { startInProcess } from '../test-utils/in-process.ts'
import { interceptStore } from '../test-utils/intercept-store.ts'

/**
 * The cross-owner inbox costs what the caller may see (docs/approvals.md#deciding-without-a-chat-stream): a principal
 * who may decide only its own batches reads only those, and the rows a page reads count in the requests quota.
 */
const NOW = Date.parse('2030-01-01T00:00:00.000Z')
const OPEN = 300
let rowsRead = 0

async function paused(store: Store, owner: string, n: number): Promise<void> {
  const threadId = `t-${owner}-${n}`
  const runId = `r-${threadId}`
  const started = await store.startInputRun({
    threadId,
    ownerId: owner,
    runId,
    parentRunId: undefined,
    expectedRevision: null,
    initialState: {},
    messages: [{ id: `u-${threadId}`, role: 'user', content: `deploy ${n}` }],
    toolResults: [],
    now: NOW - 10_000 + n,
    executorId: 'exec-test',
    leaseUntil: NOW + 60_000,
  })
  expect(started.ok).toBe(true)
  const interrupt = { id: `int-${threadId}`, reason: 'tool_call', toolCallId: `call-${threadId}` }
  await store.createBatch({
    batchId: `batch-${threadId}`,
    threadId,
    runId,
    interrupts: [{ interrupt, kind: 'approval', toolCallId: interrupt.toolCallId, toolName: 'deploy' }],
    createdAt: NOW - 10_000 + n,
    expiresAt: NOW + 60_000,
    onExpiry: 'deny',
  })
  await store.finishRun({
    threadId,
    runId,
    status: 'interrupted',
    outcome: { type: 'interrupt', interrupts: [] },
    errorCode: undefined,
    events: [{ type: 'RUN_FINISHED', json: '{"type":"RUN_FINISHED"}' }],
    closeBatch: undefined,
    now: NOW - 10_000 + n,
  })
}

/** A SQLite file with OPEN open batches of eng and one of alice; the server counts the inbox rows it reads. */
async function seeded(options: Parameters<typeof startInProcess>[0]): Promise<InProcessServer> {
  const tmp = tempDir()
  cleanups.push(async () => tmp.cleanup())
  const seed = createSqliteStore(tmp.dbPath)
  for (let i = 0; i < OPEN; i++) await paused(seed, 'eng', i)
  await paused(seed, 'alice', OPEN)
  await seed.close()
  const real = createSqliteStore(tmp.dbPath)
  const store = interceptStore(real, {
    listPendingBatches: async (query) => {
      const rows = await real.listPendingBatches(query)
      rowsRead += rows.length
      return rows
    },
  })
  const server = await startInProcess({ store, now: () => NOW, ...options })
  cleanups.unshift(() => server.close())
  return server
}

const cleanups: (() => Promise<void>)[] = []
afterAll(async () => {
  for (const cleanup of cleanups) await cleanup()
})

describe('the inbox costs what the caller may see', () => {
  it('a principal who decides only its own batches reads only its own rows', async () => {
    const s = await seeded({ approvers: ['mgr'] })
    rowsRead = 0
    const page = await getJson<PendingBatchPage>(s, '/interrupts?status=pending', 'alice')
    expect(page.body.items.map((b) => b.threadId)).toEqual([`t-alice-${OPEN}`])
    expect(page.body.nextCursor).toBeUndefined()
    expect(rowsRead).toBe(1)
    // bob may decide nothing of eng's: it reads nothing at all.
    rowsRead = 0
    expect((await getJson<PendingBatchPage>(s, '/interrupts?status=pending', 'bob')).body.items).toEqual([])
    expect(rowsRead).toBe(0)
  })

  it('the rows a page reads count in the requests quota', async () => {
    // A custom canDecide: mgr may decide only alice's batch, so its page reads every row (301: 3 more points).
    const s = await seeded({
      canDecide: (principal, ctx) => principal === ctx.owner || (principal === 'mgr' && ctx.owner === 'alice'),
      limits: { maxRequestsPerSecond: 10 },
    })
    const statuses: number[] = []
    for (let i = 0; i < 4; i++)
      statuses.push((await s.request('/interrupts?status=pending', { principal: 'mgr' })).status)
    // 1 point when admitted + 3 charged after: the fourth request would be the 13th point of 10 in that second.
    expect(statuses).toEqual([200, 200, 200, 429])
  })
})
