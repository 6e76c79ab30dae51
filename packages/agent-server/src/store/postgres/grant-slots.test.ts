import { describe, expect, it, vi } from 'vitest'
import pg from 'pg'
import type { Grant } from '@interlude/protocol'
import { conformanceKit } from '../conformance/kit.ts'
import { countingPool, createTestSchema, PG_URL, pgAvailable } from '../../test-utils/pg.ts'
import { withDefaultUser } from './connection.ts'
import { TakeGroups } from './grant-takes.ts'
import type { Store } from '../store.ts'
import { createPostgresStore } from './postgres-store.ts'

const available = await pgAvailable('PostgreSQL grant slots')

/**
 * A grant's take on PostgreSQL (docs/decisions.md#bounded-grants): it claims a free call slot, skipping the slots
 * concurrent takes hold instead of queueing behind them, and takes nothing when every free slot is held.
 */
const { paused, claimer, now } = conformanceKit(() => Promise.reject(new Error('each test opens its own store')))

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

/** A paused thread whose batch was claimed making `grants`, on a store and on another connection (a replica). */
async function withGrants(
  grants: readonly Grant[],
  body: (t: { store: Store; other: pg.Client; threadId: string }) => Promise<void>,
): Promise<void> {
  const { schema, drop } = await createTestSchema()
  const store = await createPostgresStore({ connectionString: PG_URL, schema, max: 4 })
  const other = new pg.Client({ connectionString: withDefaultUser(PG_URL), options: `-c search_path=${schema}` })
  await other.connect()
  try {
    const { threadId, batchId } = await paused(store)
    const claim = { threadId, batchId, runId: 'r-claim', decisionHash: 'h', decision: [], now, ...claimer }
    expect((await store.claimBatch({ ...claim, grants: [...grants] })).ok).toBe(true)
    await body({ store, other, threadId })
  } finally {
    await other.end()
    await store.close()
    await drop()
  }
}

describe.skipIf(!available)('grant slots (PostgreSQL)', () => {
  it('a take skips a slot another take holds, takes nothing when all are held, and never more than the grant', async () => {
    await withGrants([grant('g1', 2)], async ({ store, other, threadId }) => {
      const grants = store.grants!
      const take = (toolCallId: string) =>
        grants.take({ grantId: 'g1', owner: 'alice', threadId, toolCallId, runId: 'r2', now: now + 1 })
      const slots = async () =>
        (
          await other.query<{ slot: number; used_by_call: string | null }>(
            "SELECT slot, used_by_call FROM grant_slots WHERE grant_id = 'g1' ORDER BY slot",
          )
        ).rows
      expect(await slots()).toEqual([
        { slot: 1, used_by_call: null },
        { slot: 2, used_by_call: null },
      ])
      // A take in flight on the other connection holds slot 1 until its transaction ends.
      await other.query('BEGIN')
      await other.query("SELECT slot FROM grant_slots WHERE grant_id = 'g1' AND slot = 1 FOR UPDATE")
      // These takes answer while the lock is held (a take that queued on it would never return here).
      expect(await take('c-1')).toMatchObject({ grantId: 'g1', toolCallId: 'c-1' })
      expect(await take('c-2')).toBeUndefined() // every free slot is held: the call pauses
      await other.query('ROLLBACK') // the take in flight failed: its slot is free again
      expect((await grants.list('alice', { now }))[0]?.callsLeft).toBe(1)
      expect(await take('c-3')).toMatchObject({ grantId: 'g1', toolCallId: 'c-3' })
      expect(await take('c-4')).toBeUndefined()
      expect(await slots()).toEqual([
        { slot: 1, used_by_call: 'c-3' },
        { slot: 2, used_by_call: 'c-1' },
      ])
      const records = (await store.listDecisions(threadId)).filter((d) => d.via === 'grant')
      expect(records.map((d) => d.toolCallId)).toEqual(['c-1', 'c-3'])
    })
  })

  it('takes released together are one statement; a group failing on one row is retried take by take', async () => {
    await withGrants([grant('g1', 4), grant('g2', 1)], async ({ store, threadId }) => {
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
    })
  })

  it('slots another take commits while a take is under way are seen used: the take gets the next one, or nothing', async () => {
    await withGrants([grant('g3', 3), grant('g2', 2)], async ({ store, other, threadId }) => {
      // The slot lock waits for the other take here, after the take's statement began: the other take's slots are
      // free in that statement's snapshot and used, committed, when they are locked.
      await other.query(`ALTER FUNCTION grant_free_slots(TEXT[], INTEGER[]) RENAME TO grant_free_slots_now;
      CREATE FUNCTION grant_free_slots(grant_ids TEXT[], counts INTEGER[]) RETURNS TABLE (grant_id TEXT, slot INTEGER)
      LANGUAGE plpgsql VOLATILE AS $fn$
      BEGIN
        PERFORM pg_advisory_xact_lock_shared(4242);
        RETURN QUERY SELECT * FROM grant_free_slots_now(grant_ids, counts);
      END
      $fn$`)
      const take = (grantId: string, toolCallId: string) =>
        store.grants!.take({ grantId, owner: 'alice', threadId, toolCallId, runId: 'r2', now: now + 1 })
      /** Another replica's take of `slots` of `grantId`, committed while `during` is under way. */
      const whileOtherTakes = async <T>(grantId: string, slots: number, during: () => Promise<T>): Promise<T> => {
        await other.query('BEGIN')
        await other.query('SELECT pg_advisory_xact_lock(4242)')
        await other.query('UPDATE grant_slots SET used_by_call = $2, used_at = 1 WHERE grant_id = $1 AND slot <= $3', [
          grantId,
          'elsewhere',
          slots,
        ])
        let answered = false
        const result = during().finally(() => (answered = true))
        // The take's statement has begun (its snapshot taken, the slots free in it) and its slot lock waits.
        await vi.waitFor(async () => {
          const waiting = await other.query(
            "SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND objid = 4242 AND NOT granted",
          )
          expect(waiting.rowCount).toBeGreaterThan(0)
        })
        expect(answered).toBe(false)
        await other.query('COMMIT')
        return result
      }
      // Alone (one statement per take): 2 of g3's 3 slots went elsewhere meanwhile; the take gets the third.
      expect(await whileOtherTakes('g3', 2, () => take('g3', 'c1'))).toMatchObject({ grantId: 'g3', toolCallId: 'c1' })
      // Together: both of g2's slots went elsewhere; neither take gets one, and nothing is written for them.
      expect(await whileOtherTakes('g2', 2, () => Promise.all([take('g2', 'c2'), take('g2', 'c3')]))).toEqual([
        undefined,
        undefined,
      ])
      const slots = await other.query<{ grant_id: string; slot: number; used_by_call: string }>(
        'SELECT grant_id, slot, used_by_call FROM grant_slots ORDER BY grant_id, slot',
      )
      expect(slots.rows.map((r) => `${r.grant_id}.${r.slot}:${r.used_by_call}`)).toEqual([
        'g2.1:elsewhere',
        'g2.2:elsewhere',
        'g3.1:elsewhere',
        'g3.2:elsewhere',
        'g3.3:c1',
      ])
      const records = (await store.listDecisions(threadId)).filter((d) => d.via === 'grant')
      expect(records.map((d) => `${d.grantId}:${d.toolCallId}`)).toEqual(['g3:c1'])
    })
  })

  it("two replicas taking for one call at once: the second answers the first one's record; one slot is used", async () => {
    await withGrants([grant('g1', 3)], async ({ store, other, threadId }) => {
      const call = { grantId: 'g1', owner: 'alice', threadId, toolCallId: 'c-1', now: now + 1 }
      // The other replica's take of the call, its transaction still open: its slot and record are not committed.
      await other.query('BEGIN')
      const first = await new TakeGroups(other, 1).take({ ...call, runId: 'r-there' })
      expect(first).toMatchObject({ grantId: 'g1', toolCallId: 'c-1', runId: 'r-there' })
      let answered = false
      const second = store.grants!.take({ ...call, runId: 'r-here' }).finally(() => (answered = true))
      // This take locked another free slot and now waits on the record's key for the other transaction.
      await vi.waitFor(async () => {
        const waiting = await other.query(
          'SELECT 1 FROM pg_stat_activity WHERE pg_backend_pid() = ANY(pg_blocking_pids(pid))',
        )
        expect(waiting.rowCount).toBeGreaterThan(0)
      })
      expect(answered).toBe(false)
      await other.query('COMMIT')
      expect(await second).toEqual(first)
      const used = await other.query("SELECT used_by_call FROM grant_slots WHERE grant_id = 'g1' ORDER BY slot")
      expect(used.rows.map((r: { used_by_call: string | null }) => r.used_by_call)).toEqual(['c-1', null, null])
      const records = (await store.listDecisions(threadId)).filter((d) => d.via === 'grant')
      expect(records.map((d) => `${d.toolCallId}:${d.runId}`)).toEqual(['c-1:r-there'])
    })
  })

  it('two replicas taking for one call when the first holds the last free slot: the second takes nothing', async () => {
    await withGrants([grant('g1', 1)], async ({ store, other, threadId }) => {
      const call = { grantId: 'g1', owner: 'alice', threadId, toolCallId: 'c-1', now: now + 1 }
      await other.query('BEGIN')
      const first = await new TakeGroups(other, 1).take({ ...call, runId: 'r-there' })
      expect(first).toMatchObject({ grantId: 'g1', toolCallId: 'c-1' })
      // No free slot it can lock, so no wait on the record's key: it answers while the first is still open.
      expect(await store.grants!.take({ ...call, runId: 'r-here' })).toBeUndefined()
      await other.query('COMMIT')
      // Once committed, the call's take is the first's, on every replica.
      expect(await store.grants!.taken(threadId, 'c-1')).toEqual(first)
    })
  })
})
