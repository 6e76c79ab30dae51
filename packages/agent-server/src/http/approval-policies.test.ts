import { describe, expect, it } from 'vitest'
import type { DecisionAccepted, PendingBatchPage, ThreadSnapshot } from '@interlude/protocol'
import { SYSTEM_EXPIRY_PRINCIPAL } from '@interlude/protocol'
import type { DecisionPolicy } from '../agent/decision-policy.ts'
import { bearerTokens } from '../auth/authenticate.ts'
import { releaseAssistant } from '../demo/release-assistant.ts'
import { createSqliteStore } from '../store/sqlite/sqlite-store.ts'
import { getJson, postDecision } from '../test-utils/decisions.ts'
import { interruptsOf, newThreadId, runInput, tempDir, TOKENS, userMessage } from '../test-utils/harness.ts'
import type { InProcessServer } from '../test-utils/in-process.ts'
import { serversPerTest } from '../test-utils/in-process.ts'
import { resolved } from '../test-utils/resume-entries.ts'
import { call, rightsAgent } from '../test-utils/rights-agents.ts'
import { createAgentServer } from './app.ts'

/**
 * Organisation policies besides the quorum (docs/approvals.md#organisation-policies): a chain of stages, a deadline
 * that approves, groups, and the definition errors at server creation. Real routes over a SQLite file.
 */
const server = serversPerTest({ approvers: ['alice', 'bob', 'mgr'], groups: { leads: ['mgr'] } })

async function paused(s: InProcessServer) {
  const threadId = newThreadId()
  const run = await s.postRun(runInput(threadId, [userMessage(call('deploy', { env: 'production' }))]), {
    principal: 'alice',
  })
  const interrupts = interruptsOf(run.events)
  expect(interrupts).toHaveLength(1)
  return { threadId, interrupt: interrupts[0]! }
}

const inbox = async (s: InProcessServer, who: 'bob' | 'mgr') =>
  (await getJson<PendingBatchPage>(s, '/interrupts?status=pending', who)).body.items.map((b) => b.threadId)

describe('a chain of stages', () => {
  it("the second stage's deciders see nothing until the first approved", async () => {
    const policy: DecisionPolicy = { chain: [{ of: ['bob'] }, { of: ['group:leads'] }] }
    const { agent, ran } = rightsAgent({ deploy: { approvers: undefined, policy } })
    const s = await server({ agent })
    const { threadId, interrupt } = await paused(s)
    const snapshot = (who: 'bob' | 'mgr') => getJson<ThreadSnapshot>(s, `/threads/${threadId}?owner=alice`, who)

    // Stage 2 (mgr): not in the inbox, 404 on the thread and on a decision.
    expect(await inbox(s, 'mgr')).not.toContain(threadId)
    expect((await snapshot('mgr')).status).toBe(404)
    const early = await postDecision(
      s,
      threadId,
      { runId: 'run_mgr_early', resume: [resolved(interrupt)] },
      { principal: 'mgr', owner: 'alice' },
    )
    expect(early).toMatchObject({ status: 404, error: { code: 'THREAD_NOT_FOUND' } })
    expect(await inbox(s, 'bob')).toContain(threadId)

    const first = await postDecision<DecisionAccepted>(
      s,
      threadId,
      { runId: 'run_bob', resume: [resolved(interrupt)] },
      { principal: 'bob', owner: 'alice' },
    )
    expect(first.body.pending).toEqual([{ interruptId: interrupt.id, stage: 1, approvals: 0, quorum: 1 }])
    // Now stage 2 sees it, and stage 1 (done) no longer decides it.
    expect(await inbox(s, 'mgr')).toContain(threadId)
    const row = (await getJson<PendingBatchPage>(s, '/interrupts?status=pending', 'mgr')).body.items[0]
    expect(row?.votes).toEqual([{ interruptId: interrupt.id, stage: 1, approvals: 0, quorum: 1 }])
    expect(await inbox(s, 'bob')).not.toContain(threadId)
    expect((await snapshot('mgr')).body.interrupts?.map((i) => i.id)).toEqual([interrupt.id])
    expect(ran).toEqual([])

    const second = await postDecision<DecisionAccepted>(
      s,
      threadId,
      { runId: 'run_mgr', resume: [resolved(interrupt)] },
      { principal: 'mgr', owner: 'alice' },
    )
    expect(second).toMatchObject({ status: 202, body: { runId: 'run_mgr' } })
    expect(second.body.pending).toBeUndefined()
    await expect.poll(() => ran, { timeout: 15_000 }).toEqual([{ principal: 'alice', env: 'production' }])
    const after = await getJson<ThreadSnapshot>(s, `/threads/${threadId}`, 'alice')
    expect(after.body.decisions?.map((d) => [d.decidedBy, d.vote, d.stage])).toEqual([
      ['bob', true, 0],
      ['mgr', true, 1],
    ])
  })
})

describe("onExpiry: 'approve'", () => {
  it('the deadline approves a tool that allows it: the call runs, decided by system:expiry', async () => {
    const { agent, ran } = rightsAgent({
      deploy: { approvers: undefined, timeout: 0.05, onExpiry: 'approve', allowAutoApprove: true },
    })
    const s = await server({ agent, expirySweepMs: 20 })
    const { threadId, interrupt } = await paused(s)
    expect(interrupt.metadata).toMatchObject({ onExpiry: 'approve' })
    await expect.poll(() => ran, { timeout: 15_000 }).toEqual([{ principal: 'alice', env: 'production' }])
    const snapshot = await getJson<ThreadSnapshot>(s, `/threads/${threadId}`, 'alice')
    expect(snapshot.body.decisions).toMatchObject([
      {
        decidedBy: SYSTEM_EXPIRY_PRINCIPAL,
        via: 'expiry',
        entries: [{ interruptId: interrupt.id, status: 'resolved', payload: { approved: true, reason: 'expired' } }],
      },
    ])
  })
})

describe('policy definition errors at server creation', () => {
  const create = (deploy: Record<string, unknown>, groups?: Record<string, string[]>) => {
    const tmp = tempDir()
    const store = createSqliteStore(tmp.dbPath)
    try {
      const { agent } = rightsAgent({ deploy: { approvers: undefined, ...deploy } })
      return () =>
        createAgentServer({ agent, store, authenticate: bearerTokens(TOKENS), ...(groups ? { groups } : {}) })
    } finally {
      void store.close().finally(tmp.cleanup)
    }
  }
  it.each<[string, Record<string, unknown>, RegExp]>([
    ["onExpiry 'approve' without allowAutoApprove", { onExpiry: 'approve' }, /needs allowAutoApprove: true/],
    ['quorum 0', { policy: { quorum: 0 } }, /policy\.quorum must be an integer/],
    ['an empty of', { policy: { of: [] } }, /policy\.of is empty/],
    ['chain with a top-level of', { policy: { of: ['a'], chain: [{ of: ['b'] }] } }, /policy\.chain replaces/],
    ['an unknown group', { policy: { of: ['group:nobody'] } }, /unknown group "group:nobody"/],
    ['escalate without after', { policy: { escalate: { to: ['mgr'] } } }, /escalate\.after must be/],
  ])('%s', (_name, deploy, message) => {
    expect(create(deploy)).toThrow(message)
  })
  it('a group with an empty member', () => {
    expect(create({}, { ops: [''] })).toThrow(/groups: "ops" must name non-empty principals/)
  })
  it('--production-quorum above the approvers', () => {
    expect(() => releaseAssistant({ productionQuorum: 3, approvers: ['bob', 'mgr'] })).toThrow(
      /--production-quorum 3 needs at least 3 --approver principals/,
    )
  })
})
