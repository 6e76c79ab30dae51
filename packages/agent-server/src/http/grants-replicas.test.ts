import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Grant } from '@interlude/protocol'
import pg from 'pg'
import { withDefaultUser } from '../store/postgres/connection.ts'
import { createPostgresStore } from '../store/postgres/postgres-store.ts'
import { interruptsOf, newThreadId, resumeInput, runInput, userMessage } from '../test-utils/harness.ts'
import type { InProcessServer } from '../test-utils/in-process.ts'
import { startInProcess } from '../test-utils/in-process.ts'
import { opsAgent } from '../test-utils/ops-agent.ts'
import { createTestSchema, PG_URL, pgAvailable, TEST_POOLS } from '../test-utils/pg.ts'
import { decisionEvents as decisions } from '../test-utils/resume-entries.ts'

/**
 * Bounded grants across replicas (docs/approvals.md#bounded-grants): two servers, each with its own PostgreSQL store,
 * on one schema. A principal grant of 3 is taken by one conditional update per call, so 30 matching runs racing on
 * both replicas run exactly 3 calls without a pause and pause the other 27.
 */
const available = await pgAvailable('bounded grants across PostgreSQL replicas')
let a: InProcessServer
let b: InProcessServer
let dropSchema: (() => Promise<void>) | undefined

beforeAll(async () => {
  if (!available) return
  const { schema, drop } = await createTestSchema()
  dropSchema = drop
  const replica = async () =>
    startInProcess({
      store: await createPostgresStore({ connectionString: PG_URL, schema, ...TEST_POOLS }),
      agent: opsAgent({ grant: { scopes: 'principal', maxCalls: 5, match: ['service'] } }),
      heartbeatMs: 50,
    })
  a = await replica()
  b = await replica()
})
afterAll(async () => {
  await a?.close()
  await b?.close()
  await dropSchema?.()
})

describe.skipIf(!available)('bounded grants across two PostgreSQL replicas', () => {
  it('a principal grant of 3: 30 concurrent matching runs in 30 threads → exactly 3 run, 27 pause', async () => {
    const first = newThreadId()
    const opened = await a.postRun(runInput(first, [userMessage('restart web')]))
    const [question] = interruptsOf(opened.events)
    const grant = { calls: 3, scope: 'principal', match: { service: 'web' } }
    const answer = { interruptId: question!.id, status: 'resolved' as const, payload: { approved: true, grant } }
    expect((await b.postRun(resumeInput(first, [answer]))).status).toBe(200)
    const listed = (await (await a.request('/grants')).json()) as { items: Grant[] }
    expect(listed.items).toEqual([
      expect.objectContaining({ scope: 'principal', callsLeft: 3, match: { service: 'web' } }),
    ])
    const { grantId } = listed.items[0]!

    // Another service does not match: it asks, and takes nothing.
    expect(interruptsOf((await a.postRun(runInput(newThreadId(), [userMessage('restart db')]))).events)).toHaveLength(1)

    const runs = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        (i % 2 === 0 ? a : b).postRun(runInput(newThreadId(), [userMessage('restart web')])),
      ),
    )
    expect(runs.map((r) => r.status)).toEqual(runs.map(() => 200))
    const ran = runs.filter((r) => interruptsOf(r.events).length === 0)
    const paused = runs.filter((r) => interruptsOf(r.events).length === 1)
    expect(ran).toHaveLength(3)
    expect(paused).toHaveLength(27)
    for (const r of ran) expect(decisions(r.events)).toEqual([expect.objectContaining({ via: 'grant', grantId })])
    for (const r of paused) expect(decisions(r.events)).toEqual([])
    expect(((await (await b.request('/grants')).json()) as { items: Grant[] }).items).toEqual([])
  })

  it('a call a grant approved runs only after a synchronous commit of its own record (the take does not wait for one)', async () => {
    // The take commits without waiting for its WAL flush (docs/decisions.md#bounded-grants); what makes it durable is
    // the run's next write, the call's record, committed before the effect. Seen from outside, at the effect.
    const { schema, drop } = await createTestSchema()
    const outside = new pg.Client({ connectionString: withDefaultUser(PG_URL), options: `-c search_path=${schema}` })
    await outside.connect()
    const seen: { call: number; record: number }[] = []
    const count = async (table: string, toolCallId: string) =>
      Number(
        (await outside.query(`SELECT count(*) AS n FROM ${table} WHERE tool_call_id = $1`, [toolCallId])).rows[0].n,
      )
    const server = await startInProcess({
      store: await createPostgresStore({ connectionString: PG_URL, schema, ...TEST_POOLS }),
      agent: opsAgent({ grant: { scopes: 'principal', maxCalls: 5 } }, async (toolCallId) => {
        seen.push({ call: await count('tool_calls', toolCallId), record: await count('grant_decisions', toolCallId) })
      }),
    })
    try {
      const threadId = newThreadId()
      const [question] = interruptsOf((await server.postRun(runInput(threadId, [userMessage('restart web')]))).events)
      const grant = { calls: 2, scope: 'principal' }
      const answer = { interruptId: question!.id, status: 'resolved' as const, payload: { approved: true, grant } }
      expect((await server.postRun(resumeInput(threadId, [answer]))).status).toBe(200)
      const later = await server.postRun(runInput(newThreadId(), [userMessage('restart web')]))
      expect(interruptsOf(later.events)).toEqual([])
      expect(decisions(later.events)).toEqual([expect.objectContaining({ via: 'grant' })])
      // The approved call (not via a grant: no grant record), then the granted one: each recorded before it ran.
      expect(seen).toEqual([
        { call: 1, record: 0 },
        { call: 1, record: 1 },
      ])
    } finally {
      await server.close()
      await outside.end()
      await drop()
    }
  })
})
