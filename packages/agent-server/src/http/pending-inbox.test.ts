import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ExpiryPolicy, PendingBatchPage } from '@interlude/protocol'
import { getJson } from '../test-utils/decisions.ts'
import type { TOKENS } from '../test-utils/harness.ts'
import type { InProcessServer } from '../test-utils/in-process.ts'
import { startInProcess } from '../test-utils/in-process.ts'

/**
 * `GET {base}/interrupts?status=pending` (docs/approvals.md): the open batches the caller may decide across owners,
 * newest first, in cursor pages; past their deadline only while their policy keeps them open.
 */
const NOW = Date.parse('2030-01-01T00:00:00.000Z')
let s: InProcessServer
/** threadId → when its batch opened; filled in creation order (oldest first). */
const opened: { threadId: string; owner: string; expired: ExpiryPolicy | undefined }[] = []

/** A thread of `owner` paused on one deploy approval, written through the store as a run would. */
async function paused(owner: string, n: number, expired?: ExpiryPolicy): Promise<void> {
  const threadId = `t-${owner}-${n}`
  const runId = `r-${threadId}`
  const createdAt = NOW - 10_000 + opened.length
  const started = await s.store.startInputRun({
    threadId,
    ownerId: owner,
    runId,
    parentRunId: undefined,
    expectedRevision: null,
    initialState: {},
    messages: [{ id: `u-${threadId}`, role: 'user', content: `deploy ${n}` }],
    toolResults: [],
    now: createdAt,
    executorId: 'exec-test',
    leaseUntil: NOW + 60_000,
    title: `deploy ${n}`,
  })
  expect(started.ok).toBe(true)
  const interrupt = { id: `int-${threadId}`, reason: 'tool_call', toolCallId: `call-${threadId}` }
  await s.store.createBatch({
    batchId: `batch-${threadId}`,
    threadId,
    runId,
    interrupts: [{ interrupt, kind: 'approval', toolCallId: interrupt.toolCallId, toolName: 'deploy' }],
    createdAt,
    expiresAt: expired ? NOW - 1 : NOW + 60_000,
    onExpiry: expired ?? 'deny',
  })
  await s.store.finishRun({
    threadId,
    runId,
    status: 'interrupted',
    outcome: { type: 'interrupt', interrupts: [] },
    errorCode: undefined,
    events: [{ type: 'RUN_FINISHED', json: '{"type":"RUN_FINISHED"}' }],
    closeBatch: undefined,
    now: createdAt,
  })
  opened.push({ threadId, owner, expired })
}

beforeAll(async () => {
  s = await startInProcess({ approvers: ['mgr'], now: () => NOW })
  for (let i = 0; i < 4; i++) await paused('eng', i)
  for (let i = 0; i < 3; i++) await paused('alice', i)
  await paused('eng', 90, 'deny')
  await paused('eng', 91, 'cancel')
  await paused('eng', 92, 'keep')
  await paused('eng', 4)
})
afterAll(async () => {
  await s.dispose()
})

/** Every page at `limit`, following `nextCursor` to the end. */
async function allPages(principal: keyof typeof TOKENS, limit: number): Promise<PendingBatchPage[]> {
  const pages: PendingBatchPage[] = []
  let cursor: string | undefined
  do {
    const query = `/interrupts?status=pending&limit=${limit}${cursor !== undefined ? `&cursor=${cursor}` : ''}`
    const answer = await getJson<PendingBatchPage>(s, query, principal)
    expect(answer.status).toBe(200)
    pages.push(answer.body)
    cursor = answer.body.nextCursor
  } while (cursor !== undefined && pages.length < 50)
  return pages
}

const expectedFor = (owners: readonly string[]) =>
  opened
    .filter((b) => owners.includes(b.owner) && (b.expired === undefined || b.expired === 'keep'))
    .map((b) => b.threadId)
    .reverse()

describe('GET {base}/interrupts?status=pending', () => {
  it('an approver pages through every owner’s decidable batches, newest first, without repeats', async () => {
    const pages = await allPages('mgr', 3)
    const ids = pages.flatMap((p) => p.items.map((i) => i.threadId))
    expect(ids).toEqual(expectedFor(['eng', 'alice']))
    expect(pages.slice(0, -1).every((p) => p.items.length === 3)).toBe(true)
    expect(pages[pages.length - 1]?.nextCursor).toBeUndefined()
  })

  it('an owner sees its own batches; a principal who may decide nothing sees none', async () => {
    expect((await allPages('eng', 100)).flatMap((p) => p.items.map((i) => i.threadId))).toEqual(expectedFor(['eng']))
    expect((await allPages('alice', 2)).flatMap((p) => p.items.map((i) => i.threadId))).toEqual(expectedFor(['alice']))
    expect(await allPages('bob', 20)).toEqual([{ items: [] }])
  })

  it('an item carries the owner, the stored title, the times, the policy and the interrupts as emitted', async () => {
    const [page] = await allPages('mgr', 1)
    const threadId = 't-eng-4'
    expect(page?.items).toEqual([
      {
        threadId,
        batchId: `r-${threadId}`,
        owner: 'eng',
        title: 'deploy 4',
        openedAt: new Date(NOW - 10_000 + opened.findIndex((b) => b.threadId === threadId)).toISOString(),
        expiresAt: new Date(NOW + 60_000).toISOString(),
        onExpiry: 'deny',
        interrupts: [{ id: `int-${threadId}`, reason: 'tool_call', toolCallId: `call-${threadId}` }],
      },
    ])
    const keep = (await allPages('mgr', 100))[0]?.items.find((i) => i.threadId === 't-eng-92')
    expect(keep).toMatchObject({ onExpiry: 'keep', expiresAt: new Date(NOW - 1).toISOString() })
  })
})
