import { describe, expect, it } from 'vitest'
import pg from 'pg'
import type { Grant } from '@interlude/protocol'
import { conformanceKit } from '../conformance/kit.ts'
import { countingPool, createTestSchema, PG_URL, pgAvailable } from '../../test-utils/pg.ts'
import { withDefaultUser } from './connection.ts'
import { TakeGroups } from './grant-takes.ts'
import { createPostgresStore } from './postgres-store.ts'

const available = await pgAvailable('PostgreSQL grant slots')

/**
 * A grant's take on PostgreSQL (docs/decisions.md#bounded-grants): it claims a free call slot, skipping the slots
 * concurrent takes hold instead of queueing behind them, and takes nothing when every free slot is held.
 */
const { paused, claimer, now } = conformanceKit(() => Promise.reject(new Error('each test opens its own store')))

describe.skipIf(!available)('grant slots (PostgreSQL)', () => {
  it('a take skips a slot another take holds, takes nothing when all are held, and never more than the grant', async () => {
    const { schema, drop } = await createTestSchema()
    const store = await createPostgresStore({ connectionString: PG_URL, schema, max: 4 })
    // Another connection, as a take in flight elsewhere.
    const holder = new pg.Client({ connectionString: withDefaultUser(PG_URL), options: `-c search_path=${schema}` })
    await holder.connect()
    try {
      const { threadId, batchId } = await paused(store)
      const grant: Grant = {
        grantId: 'g1',
        owner: 'alice',
        scope: 'principal',
        toolName: 'deploy',
        calls: 2,
        callsLeft: 2,
        createdBy: 'alice',
        createdAt: new Date(now).toISOString(),
        sourceInterruptId: 'int_g1',
      }
      const claim = { threadId, batchId, runId: 'r-claim', decisionHash: 'h', decision: [], now, ...claimer }
      expect((await store.claimBatch({ ...claim, grants: [grant] })).ok).toBe(true)
      const grants = store.grants!
      const take = (toolCallId: string) =>
        grants.take({ grantId: 'g1', owner: 'alice', threadId, toolCallId, runId: 'r2', now: now + 1 })
      const slots = async () =>
        (
          await holder.query<{ slot: number; used_by_call: string | null }>(
            "SELECT slot, used_by_call FROM grant_slots WHERE grant_id = 'g1' ORDER BY slot",
          )
        ).rows
      expect(await slots()).toEqual([
        { slot: 1, used_by_call: null },
        { slot: 2, used_by_call: null },
      ])
      // A take in flight on the other connection holds slot 1 until its transaction ends.
      await holder.query('BEGIN')
      await holder.query("SELECT slot FROM grant_slots WHERE grant_id = 'g1' AND slot = 1 FOR UPDATE")
      // These takes answer while the lock is held (a take that queued on it would never return here).
      expect(await take('c-1')).toMatchObject({ grantId: 'g1', toolCallId: 'c-1' })
      expect(await take('c-2')).toBeUndefined() // every free slot is held: the call pauses
      await holder.query('ROLLBACK') // the take in flight failed: its slot is free again
      expect((await grants.list('alice', { now }))[0]?.callsLeft).toBe(1)
      expect(await take('c-3')).toMatchObject({ grantId: 'g1', toolCallId: 'c-3' })
      expect(await take('c-4')).toBeUndefined()
      expect(await slots()).toEqual([
        { slot: 1, used_by_call: 'c-3' },
        { slot: 2, used_by_call: 'c-1' },
      ])
      const records = (await store.listDecisions(threadId)).filter((d) => d.via === 'grant')
      expect(records.map((d) => d.toolCallId)).toEqual(['c-1', 'c-3'])
    } finally {
      await holder.end()
      await store.close()
      await drop()
    }
  })

  it('takes released together are one statement; a group failing on one row is retried take by take', async () => {
    const { schema, drop } = await createTestSchema()
    const store = await createPostgresStore({ connectionString: PG_URL, schema, max: 4 })
    try {
      const { threadId, batchId } = await paused(store)
      const grant = (grantId: string, calls: number): Grant => ({
        grantId,
        owner: 'alice',
        scope: 'principal',
        toolName: 'deploy',
        calls,
        callsLeft: calls,
        createdBy: 'alice',
        createdAt: new Date(now).toISOString(),
        sourceInterruptId: `int_${grantId}`,
      })
      const claim = { threadId, batchId, runId: 'r-claim', decisionHash: 'h', decision: [], now, ...claimer }
      expect((await store.claimBatch({ ...claim, grants: [grant('g1', 4), grant('g2', 1)] })).ok).toBe(true)
      // TakeGroups on the store's pool, one statement in flight, counting the statements it sends.
      const { q, sent, failGroup } = countingPool(store)
      const takes = new TakeGroups(q, 1)
      const take = (grantId: string, toolCallId: string) =>
        takes.take({ grantId, owner: 'alice', threadId, toolCallId, runId: 'r2', now: now + 1 })
      const ids = (records: readonly ({ grantId?: string } | undefined)[]) => records.map((r) => r?.grantId ?? null)

      // One tick, four takes of two grants: one statement.
      expect(ids(await Promise.all([take('g1', 'c1'), take('g2', 'c2'), take('g2', 'c3'), take('g1', 'c4')]))).toEqual([
        'g1',
        'g2',
        null,
        'g1',
      ])
      expect(sent).toEqual(['group'])

      // A group statement that fails on one row (a unique violation) wrote nothing: each take is then sent alone.
      sent.length = 0
      failGroup(Object.assign(new Error('duplicate key'), { code: '23505' }))
      expect(ids(await Promise.all([take('g1', 'c5'), take('g1', 'c1'), take('g2', 'c6')]))).toEqual(['g1', 'g1', null])
      expect(sent).toEqual(['group', 'one', 'one', 'one'])

      // Any other error (the connection, the database) fails the takes of that statement, as it would each alone.
      sent.length = 0
      failGroup(Object.assign(new Error('connection lost'), { code: '08006' }))
      const failed = await Promise.allSettled([take('g1', 'c7'), take('g1', 'c8')])
      expect(failed.map((r) => r.status)).toEqual(['rejected', 'rejected'])
      expect(sent).toEqual(['group'])

      // Nothing was half-written: g1's 4 calls went to c1, c4, c5 and one is left; g2's to c2.
      expect((await store.grants!.list('alice', { now })).map((g) => [g.grantId, g.callsLeft])).toEqual([['g1', 1]])
      const records = (await store.listDecisions(threadId)).filter((d) => d.via === 'grant')
      expect(records.map((d) => `${d.grantId}:${d.toolCallId}`).sort()).toEqual(['g1:c1', 'g1:c4', 'g1:c5', 'g2:c2'])
    } finally {
      await store.close()
      await drop()
    }
  })
})
