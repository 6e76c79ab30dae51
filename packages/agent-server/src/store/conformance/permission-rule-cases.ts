import type { PermissionRule } from '@interlude/protocol'
import { canonicalJson } from '@interlude/protocol'
import { expect, it } from 'vitest'
import type { ConformanceKit } from './kit.ts'

/** Remembered permissions (docs/approvals.md#remembered-permissions): rules and their decision records. */
export function permissionRuleCases(kit: ConformanceKit): void {
  const { withDb, ids, start, now } = kit
  const rule = (over: Partial<PermissionRule> & Pick<PermissionRule, 'ruleId'>): PermissionRule => ({
    owner: 'alice',
    scope: 'thread',
    threadId: 't-1',
    toolName: 'publish',
    createdBy: 'alice',
    createdAt: new Date(now).toISOString(),
    sourceInterruptId: `int_${over.ruleId}`,
    ...over,
  })

  it('stores rules once per id, lists them by owner, thread and tool, and revokes only the owner’s', () =>
    withDb(async (store, db) => {
      await store.addPermissionRule(rule({ ruleId: 'r1', argsMatch: { env: 'prod', n: [1, { a: true }] } }))
      await store.addPermissionRule(rule({ ruleId: 'r1', toolName: 'changed' })) // same id: ignored
      await store.addPermissionRule(rule({ ruleId: 'r2', threadId: 't-2', createdAt: new Date(now + 1).toISOString() }))
      await store.addPermissionRule(
        rule({ ruleId: 'r3', scope: 'principal', toolName: 'deploy', createdAt: new Date(now + 2).toISOString() }),
      )
      await store.addPermissionRule(
        rule({
          ruleId: 'r4',
          owner: 'bob',
          scope: 'principal',
          createdBy: 'mgr',
          madeUnder: { role: 'decider', approvers: ['mgr'], allowSelfApproval: false },
        }),
      )

      const all = await store.listPermissionRules('alice')
      expect(all.map((r) => r.ruleId)).toEqual(['r1', 'r2', 'r3'])
      expect(all[0]).toEqual(rule({ ruleId: 'r1', argsMatch: { env: 'prod', n: [1, { a: true }] } }))
      // A principal-scoped rule carries no thread.
      expect(all[2]).not.toHaveProperty('threadId')
      // What a rule was made under round-trips; a rule stored without it has none.
      expect(all[0]).not.toHaveProperty('madeUnder')
      expect((await store.listPermissionRules('bob'))[0]?.madeUnder).toEqual({
        role: 'decider',
        approvers: ['mgr'],
        allowSelfApproval: false,
      })
      expect((await store.listPermissionRules('alice', { threadId: 't-1' })).map((r) => r.ruleId)).toEqual(['r1', 'r3'])
      const match = { owner: 'alice', threadId: 't-1', toolName: 'publish' }
      const key = canonicalJson({ env: 'prod', n: [1, { a: true }] })
      expect((await store.matchPermissionRules({ ...match, argsKey: key })).map((r) => r.ruleId)).toEqual(['r1'])
      expect(await store.matchPermissionRules({ ...match, argsKey: canonicalJson({ env: 'dev' }) })).toEqual([])
      expect(await store.matchPermissionRules({ ...match, argsKey: null })).toEqual([])
      expect(
        (await store.matchPermissionRules({ owner: 'alice', threadId: 't-9', toolName: 'deploy', argsKey: key })).map(
          (r) => r.ruleId,
        ),
      ).toEqual(['r3'])
      expect((await store.listPermissionRules('bob')).map((r) => r.ruleId)).toEqual(['r4'])

      expect(await store.revokePermissionRule('bob', 'r1', now + 5)).toBe(false) // not bob's
      expect(await store.revokePermissionRule('alice', 'r1', now + 5)).toBe(true)
      expect(await store.revokePermissionRule('alice', 'r1', now + 6)).toBe(false) // already revoked
      const other = await db.connect()
      expect((await other.listPermissionRules('alice', { threadId: 't-1' })).map((r) => r.ruleId)).toEqual(['r3'])
    }))

  it('keeps one via:"rule" record per call and lists it with the batch decisions, oldest first', () =>
    withDb(async (store) => {
      const { threadId, runId } = ids()
      await start(store, threadId, runId, null)
      const record = {
        threadId,
        runId,
        interruptIds: [],
        entries: [],
        decidedBy: 'alice',
        via: 'rule' as const,
        at: new Date(now + 10).toISOString(),
        ruleId: 'r1',
        toolCallId: 'c-1',
      }
      await store.addRuleDecision(record)
      await store.addRuleDecision({ ...record, ruleId: 'other', at: new Date(now + 20).toISOString() }) // same call
      await store.addRuleDecision({ ...record, toolCallId: 'c-2', at: new Date(now + 30).toISOString() })
      expect(await store.listDecisions(threadId)).toEqual([
        record,
        { ...record, toolCallId: 'c-2', at: new Date(now + 30).toISOString() },
      ])
      expect(await store.listDecisions('no-such-thread')).toEqual([])
    }))
}
