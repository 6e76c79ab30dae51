import { afterAll, describe, expect, it } from 'vitest'
import type { ToolDefinition } from '../agent/tool.ts'
import type { AgentServerOptions } from './app.ts'
import type { PermissionRuleList } from '@interlude/protocol'
import { getJson } from '../test-utils/decisions.ts'
import { createPostgresStore } from '../store/postgres/postgres-store.ts'
import type { Store } from '../store/store.ts'
import { createSqliteStore } from '../store/sqlite/sqlite-store.ts'
import { interruptsOf, newThreadId, resumeInput, runInput, tempDir, userMessage } from '../test-utils/harness.ts'
import type { InProcessServer } from '../test-utils/in-process.ts'
import { startInProcess } from '../test-utils/in-process.ts'
import { createTestSchema, PG_URL, pgAvailable, TEST_POOLS } from '../test-utils/pg.ts'
import { resolved } from '../test-utils/resume-entries.ts'
import { call, rightsAgent } from '../test-utils/rights-agents.ts'

/**
 * Remembered rules are checked at use (docs/approvals.md#remembered-permissions): a rule approves a call only while
 * its maker could decide that call now, also after a restart under a stricter policy.
 */
type Policy = { readonly deployApprovers?: readonly string[]; readonly approvers: readonly string[] }

function suite(name: string, openStore: () => Promise<{ store(): Promise<Store>; drop(): Promise<void> }>) {
  describe(name, () => {
    const drops: (() => Promise<void>)[] = []
    afterAll(async () => {
      for (const drop of drops) await drop()
    })

    async function serverUnder(store: Store, policy: Policy) {
      const { agent, ran } = rightsAgent({
        deploy: { approvers: policy.deployApprovers, remember: 'principal' } as Partial<ToolDefinition>,
      })
      const options: Partial<AgentServerOptions> = { agent, approvers: [...policy.approvers] }
      return { s: await startInProcess({ ...options, store }), ran }
    }

    async function deploy(s: InProcessServer, threadId: string) {
      const run = await s.postRun(runInput(threadId, [userMessage(call('deploy', { env: 'production' }))]), {
        principal: 'eng',
      })
      expect(run.status).toBe(200)
      return run
    }

    it("the owner's rule made before approvers were added asks again after the restart", async () => {
      const opened = await openStore()
      drops.push(opened.drop)
      const first = await serverUnder(await opened.store(), { approvers: [] })
      const threadId = newThreadId()
      const [interrupt] = interruptsOf((await deploy(first.s, threadId)).events)
      const approved = await first.s.postRun(
        resumeInput(threadId, [resolved(interrupt!, { approved: true, remember: 'principal' })]),
        { principal: 'eng' },
      )
      expect(approved.status).toBe(200)
      expect(first.ran).toHaveLength(1)
      // Made by the owner while deploy named no approvers: what it was made under is stored with it.
      const made = await getJson<PermissionRuleList>(first.s, '/permission-rules', 'eng')
      expect(made.body.items.map((rule) => rule.madeUnder)).toEqual([{ role: 'owner' }])
      await first.s.close()

      const second = await serverUnder(await opened.store(), { deployApprovers: ['mgr'], approvers: ['mgr'] })
      try {
        const again = await deploy(second.s, newThreadId())
        expect(interruptsOf(again.events)).toHaveLength(1)
        expect(second.ran).toEqual([])
      } finally {
        await second.s.close()
      }
    })

    it("mgr's rule stops approving once mgr is no longer an approver", async () => {
      const opened = await openStore()
      drops.push(opened.drop)
      const policy = { deployApprovers: ['mgr'], approvers: ['mgr'] }
      const first = await serverUnder(await opened.store(), policy)
      const threadId = newThreadId()
      const [interrupt] = interruptsOf((await deploy(first.s, threadId)).events)
      const approved = await first.s.postRun(
        resumeInput(threadId, [resolved(interrupt!, { approved: true, remember: 'principal' })]),
        { principal: 'mgr', owner: 'eng' },
      )
      expect(approved.status).toBe(200)
      // Under the same policy the rule approves the next deploy (no pause).
      expect(interruptsOf((await deploy(first.s, newThreadId())).events)).toEqual([])
      expect(first.ran).toHaveLength(2)
      await first.s.close()

      const second = await serverUnder(await opened.store(), { deployApprovers: ['bob'], approvers: ['bob'] })
      try {
        expect(interruptsOf((await deploy(second.s, newThreadId())).events)).toHaveLength(1)
        expect(second.ran).toEqual([])
      } finally {
        await second.s.close()
      }
    })

    it("a decider's rule is listed and revocable by it and by every principal who could make it; the owner sees it", async () => {
      const opened = await openStore()
      drops.push(opened.drop)
      const { s } = await serverUnder(await opened.store(), {
        deployApprovers: ['mgr', 'alice'],
        approvers: ['mgr', 'alice'],
      })
      try {
        const threadId = newThreadId()
        const [interrupt] = interruptsOf((await deploy(s, threadId)).events)
        const approved = await s.postRun(
          resumeInput(threadId, [resolved(interrupt!, { approved: true, remember: 'principal' })]),
          { principal: 'mgr', owner: 'eng' },
        )
        expect(approved.status).toBe(200)
        const list = async (principal: 'eng' | 'mgr' | 'alice' | 'bob', owner?: string) =>
          getJson<PermissionRuleList>(s, `/permission-rules${owner ? `?owner=${owner}` : ''}`, principal)
        const own = await list('eng')
        expect(own.body.items).toMatchObject([{ owner: 'eng', createdBy: 'mgr', scope: 'principal' }])
        // The rule records what it was made under: by a decider, while deploy's approvers were mgr and alice.
        expect(own.body.items[0]!.madeUnder).toEqual({ role: 'decider', approvers: ['mgr', 'alice'] })
        const ruleId = own.body.items[0]!.ruleId
        expect((await list('mgr', 'eng')).body.items.map((r) => r.ruleId)).toEqual([ruleId])
        expect((await list('alice', 'eng')).body.items.map((r) => r.ruleId)).toEqual([ruleId])
        // bob could not make it: it sees nothing and cannot revoke it.
        expect((await list('bob', 'eng')).body.items).toEqual([])
        const revoke = (principal: 'mgr' | 'bob') =>
          s.request(`/permission-rules/${ruleId}?owner=eng`, { method: 'DELETE', principal })
        expect((await revoke('bob')).status).toBe(404)
        expect((await revoke('mgr')).status).toBe(204)
        expect((await list('eng')).body.items).toEqual([])
        expect((await revoke('mgr')).status).toBe(404)
      } finally {
        await s.close()
      }
    })
  })
}

suite('rules are checked at use (SQLite)', async () => {
  const tmp = tempDir()
  return { store: async () => createSqliteStore(tmp.dbPath), drop: async () => tmp.cleanup() }
})

if (await pgAvailable('rules checked at use on PostgreSQL')) {
  suite('rules are checked at use (PostgreSQL)', async () => {
    const { schema, drop } = await createTestSchema()
    return { store: () => createPostgresStore({ connectionString: PG_URL, schema, ...TEST_POOLS }), drop }
  })
}
