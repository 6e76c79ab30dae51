import { describe, expect, it } from 'vitest'
import pg from 'pg'
import type { Grant } from '@interlude/protocol'
import { conformanceKit } from '../conformance/kit.ts'
import { createTestSchema, PG_URL, pgAvailable } from '../../test-utils/pg.ts'
import { withDefaultUser } from './connection.ts'
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
})
