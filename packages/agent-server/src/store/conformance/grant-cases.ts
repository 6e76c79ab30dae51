import type { Grant } from '@interlude/protocol'
import { expect, it } from 'vitest'
import type { GrantStore } from '../grants.ts'
import type { Store } from '../store.ts'
import type { ConformanceKit } from './kit.ts'

/**
 * Bounded grants (docs/approvals.md#bounded-grants): written with the claim that made them, taken one call at a time by
 * one conditional update (across connections too), never applying once revoked, used up or past `until`.
 */
export function grantCases(kit: ConformanceKit): void {
  const { withDb, paused, now, claimer } = kit
  /** A grant of 3 calls; a field given as `undefined` is left out. */
  const grant = (over: { readonly [K in keyof Grant]?: Grant[K] | undefined } & Pick<Grant, 'grantId'>): Grant => {
    const fields = {
      owner: 'alice',
      scope: 'thread',
      threadId: 'client-t',
      toolName: 'deploy',
      calls: 3,
      callsLeft: 3,
      createdBy: 'alice',
      createdAt: new Date(now).toISOString(),
      sourceInterruptId: `int_${over.grantId}`,
      ...over,
    }
    return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as unknown as Grant
  }
  // Optional for host stores (as `claimBatches` is): a store without grants skips these cases' checks.
  const grantsOf = (store: Store): GrantStore => store.grants!
  /** A paused thread whose claim makes `grants`. */
  const granted = async (store: Store, grants: readonly Grant[]) => {
    const { threadId, batchId } = await paused(store)
    const claim = { threadId, batchId, runId: `r-claim-${threadId}`, decisionHash: 'h', decision: [], now, ...claimer }
    return { threadId, result: await store.claimBatch({ ...claim, grants }) }
  }
  const take = (grants: GrantStore, grantId: string, threadId: string, toolCallId: string, at = now + 10) =>
    grants.take({ grantId, owner: 'alice', threadId, toolCallId, runId: 'r-later', now: at })

  it('a claim writes its grants in its transaction; a refused claim writes none', () =>
    withDb(async (store) => {
      if (!store.grants) return
      const grants = grantsOf(store)
      const { threadId, result } = await granted(store, [
        grant({ grantId: 'g1', match: { environment: 'staging' }, until: new Date(now + 60_000).toISOString() }),
        grant({ grantId: 'g2', scope: 'principal', threadId: undefined, madeUnder: { role: 'owner' } }),
      ])
      expect(result.ok).toBe(true)
      const listed = await grants.list('alice', { now })
      expect(listed.map((g) => g.grantId)).toEqual(['g1', 'g2'])
      expect(listed[0]).toEqual(grant({ grantId: 'g1', match: { environment: 'staging' }, until: listed[0]!.until }))
      expect(listed[0]!.until).toBe(new Date(now + 60_000).toISOString())
      expect(listed[1]).toEqual(
        grant({ grantId: 'g2', scope: 'principal', threadId: undefined, madeUnder: { role: 'owner' } }),
      )
      expect((await grants.list('alice', { now, threadId: 'other' })).map((g) => g.grantId)).toEqual(['g2'])
      expect(await grants.list('bob', { now })).toEqual([])
      // The same claim again is refused: its grants are not written twice or changed.
      const again = await store.claimBatch({
        threadId,
        batchId: `b-${threadId}`,
        runId: 'r-other',
        decisionHash: 'h',
        decision: [],
        now,
        ...claimer,
        grants: [grant({ grantId: 'g3' })],
      })
      expect(again.ok).toBe(false)
      expect((await grants.list('alice', { now })).map((g) => g.grantId)).toEqual(['g1', 'g2'])
    }))

  it('takes one call at a time, records each with via "grant", and never more than the grant allows', () =>
    withDb(async (store) => {
      if (!store.grants) return
      const grants = grantsOf(store)
      const { threadId } = await granted(store, [grant({ grantId: 'g1', createdBy: 'carol' })])
      const match = { owner: 'alice', threadId: 'client-t', toolName: 'deploy', now: now + 10 }
      expect((await grants.match(match)).map((g) => g.grantId)).toEqual(['g1'])
      expect(await grants.match({ ...match, threadId: 'elsewhere' })).toEqual([])
      expect(await grants.match({ ...match, toolName: 'publish' })).toEqual([])
      expect(await grants.match({ ...match, owner: 'bob' })).toEqual([])

      const first = await take(grants, 'g1', threadId, 'c-1')
      expect(first).toEqual({
        threadId,
        runId: 'r-later',
        interruptIds: [],
        entries: [],
        decidedBy: 'carol',
        via: 'grant',
        at: new Date(now + 10).toISOString(),
        grantId: 'g1',
        toolCallId: 'c-1',
      })
      // The same call again: the same record, nothing taken.
      expect(await take(grants, 'g1', threadId, 'c-1', now + 20)).toEqual(first)
      expect((await grants.list('alice', { now }))[0]?.callsLeft).toBe(2)
      expect(await grants.take({ grantId: 'g1', owner: 'bob', threadId, toolCallId: 'c-x', runId: 'r', now })).toBe(
        undefined,
      )
      expect((await take(grants, 'g1', threadId, 'c-2'))?.grantId).toBe('g1')
      expect((await take(grants, 'g1', threadId, 'c-3'))?.grantId).toBe('g1')
      expect(await take(grants, 'g1', threadId, 'c-4')).toBeUndefined()
      // Used up: listed and matched no more; a call's take is still found by the call.
      expect(await grants.list('alice', { now })).toEqual([])
      expect(await grants.match(match)).toEqual([])
      expect(await grants.taken(threadId, 'c-1')).toEqual(first)
      expect(await grants.taken(threadId, 'c-4')).toBeUndefined()
      expect(await grants.taken('another-thread', 'c-1')).toBeUndefined()
      const records = (await store.listDecisions(threadId)).filter((d) => d.via === 'grant')
      expect(records.map((d) => d.toolCallId)).toEqual(['c-1', 'c-2', 'c-3'])
    }))

  it('a grant past its until, or revoked, never applies again', () =>
    withDb(async (store) => {
      if (!store.grants) return
      const grants = grantsOf(store)
      const until = new Date(now + 100).toISOString()
      const { threadId } = await granted(store, [grant({ grantId: 'g-until', until }), grant({ grantId: 'g-rev' })])
      expect((await take(grants, 'g-until', threadId, 'c-1', now + 99))?.grantId).toBe('g-until')
      expect(await take(grants, 'g-until', threadId, 'c-2', now + 100)).toBeUndefined()
      expect((await grants.list('alice', { now: now + 100 })).map((g) => g.grantId)).toEqual(['g-rev'])
      expect(await grants.revoke('bob', 'g-rev', now)).toBe(false) // not bob's
      expect(await grants.revoke('alice', 'g-rev', now)).toBe(true)
      expect(await grants.revoke('alice', 'g-rev', now)).toBe(false) // revoked already
      expect(await take(grants, 'g-rev', threadId, 'c-3')).toBeUndefined()
      expect(await grants.list('alice', { now: now + 100 })).toEqual([])
      // Taken before it ended: the take stays the call's.
      expect((await grants.taken(threadId, 'c-1'))?.grantId).toBe('g-until')
    }))

  it('30 concurrent takes on two connections take exactly the 3 calls of a grant', () =>
    withDb(async (store, db) => {
      if (!store.grants) return
      const other = await db.connect()
      const { threadId } = await granted(store, [grant({ grantId: 'g1', scope: 'principal', threadId: undefined })])
      const stores = [grantsOf(store), grantsOf(other)]
      const taken = await Promise.all(
        Array.from({ length: 30 }, (_, i) => take(stores[i % 2]!, 'g1', threadId, `c-${i}`)),
      )
      expect(taken.filter((t) => t !== undefined)).toHaveLength(3)
      expect((await store.listDecisions(threadId)).filter((d) => d.via === 'grant')).toHaveLength(3)
      expect(await grantsOf(other).list('alice', { now })).toEqual([])
    }))

  it('takes released together are each decided as alone (PostgreSQL sends them as one statement)', () =>
    withDb(async (store) => {
      if (!store.grants) return
      const grants = grantsOf(store)
      const until = new Date(now + 100).toISOString()
      const { threadId } = await granted(store, [
        grant({ grantId: 'g-a', calls: 2, callsLeft: 2 }),
        grant({ grantId: 'g-b', calls: 1, callsLeft: 1 }),
        grant({ grantId: 'g-until', until }),
        grant({ grantId: 'g-rev' }),
      ])
      const before = await take(grants, 'g-b', threadId, 'c-prior')
      expect(await grants.revoke('alice', 'g-rev', now)).toBe(true)
      // One tick: every take below is released at once.
      const burst = await Promise.all([
        take(grants, 'g-a', threadId, 'c-1'),
        take(grants, 'g-b', threadId, 'c-prior'), // took g-b already: its record again
        take(grants, 'g-a', threadId, 'c-2'),
        grants.take({ grantId: 'g-a', owner: 'bob', threadId, toolCallId: 'c-bob', runId: 'r', now: now + 10 }),
        take(grants, 'g-b', threadId, 'c-3'), // g-b is used up
        take(grants, 'g-until', threadId, 'c-late', now + 100),
        take(grants, 'g-rev', threadId, 'c-rev'),
        take(grants, 'g-a', threadId, 'c-4'), // g-a had 2
        take(grants, 'g-until', threadId, 'c-5', now + 99),
        take(grants, 'g-a', threadId, 'c-1'), // the same call twice in one burst: one take, one record
      ])
      expect(burst.map((record) => record?.grantId)).toEqual([
        'g-a',
        'g-b',
        'g-a',
        undefined,
        undefined,
        undefined,
        undefined,
        undefined,
        'g-until',
        'g-a',
      ])
      expect(burst[1]).toEqual(before)
      expect(burst[9]).toEqual(burst[0])
      expect(burst[0]).toMatchObject({ toolCallId: 'c-1', decidedBy: 'alice', via: 'grant', runId: 'r-later' })
      const left = Object.fromEntries((await grants.list('alice', { now })).map((g) => [g.grantId, g.callsLeft]))
      expect(left).toEqual({ 'g-until': 2 })
      const records = (await store.listDecisions(threadId)).filter((d) => d.via === 'grant')
      expect(records.map((d) => `${d.grantId}:${d.toolCallId}`).sort()).toEqual([
        'g-a:c-1',
        'g-a:c-2',
        'g-b:c-prior',
        'g-until:c-5',
      ])
    }))
}
