import { describe, expect, it } from 'vitest'
import type { DecisionAccepted, Interrupt, ThreadSnapshot } from '@interlude/protocol'
import type { ReleaseState } from '../demo/release-assistant.ts'
import { releaseAssistant } from '../demo/release-assistant.ts'
import { createFleet } from '../demo/fleet.ts'
import { getJson, postDecision } from '../test-utils/decisions.ts'
import { interruptsOf, newThreadId, runInput, userMessage } from '../test-utils/harness.ts'
import type { InProcessServer } from '../test-utils/in-process.ts'
import { serversPerTest } from '../test-utils/in-process.ts'
import { resolved } from '../test-utils/resume-entries.ts'

/**
 * The demo's `--production-quorum 2` (docs/demo-agent.md): a deploy to production needs two approvals of the
 * approvers, never the requester's; the publish of the same batch needs one answer; staging is decided as before.
 */
const APPROVERS = ['alice', 'bob', 'mgr']
const server = serversPerTest({ approvers: APPROVERS })
const start = () =>
  server({ agent: releaseAssistant({ productionQuorum: 2, approvers: APPROVERS, fleet: createFleet() }) })

async function ask(s: InProcessServer, text: string): Promise<{ threadId: string; interrupts: Interrupt[] }> {
  const threadId = newThreadId()
  const run = await s.postRun(runInput(threadId, [userMessage(text)]), { principal: 'alice' })
  return { threadId, interrupts: interruptsOf(run.events) }
}

const deployments = async (s: InProcessServer, threadId: string) =>
  ((await getJson<ThreadSnapshot>(s, `/threads/${threadId}`, 'alice')).body.state as ReleaseState).deployments

describe('--production-quorum 2', () => {
  it('a production deploy waits for two approvers other than the requester', async () => {
    const s = await start()
    const { threadId, interrupts } = await ask(s, 'deploy v6 to production')
    const [publish, deploy] = interrupts as [Interrupt, Interrupt]
    expect(deploy.metadata).toMatchObject({ toolName: 'deploy', arguments: { environment: 'production' } })
    const all = interrupts.map((i) => resolved(i))

    // alice asked: her answer is refused (not one of the voters of her own deploy).
    const own = await postDecision(s, threadId, { runId: 'run_alice', resume: all }, 'alice')
    expect(own).toMatchObject({ status: 404, error: { code: 'THREAD_NOT_FOUND' } })
    // bob answers both: the publish is settled, the deploy has one approval of two.
    const first = await postDecision<DecisionAccepted>(
      s,
      threadId,
      { runId: 'run_bob', resume: all },
      { principal: 'bob', owner: 'alice' },
    )
    expect(first.body.pending).toEqual([{ interruptId: deploy.id, stage: 0, approvals: 1, quorum: 2 }])
    // mgr answers both too: the publish entry is left out (settled by bob), the deploy is settled.
    const second = await postDecision<DecisionAccepted>(
      s,
      threadId,
      { runId: 'run_mgr', resume: all },
      { principal: 'mgr', owner: 'alice' },
    )
    expect(second.status).toBe(202)
    expect(second.body.pending).toBeUndefined()
    await expect
      .poll(() => deployments(s, threadId), { timeout: 15_000 })
      .toMatchObject([{ version: 'v6', environment: 'production' }])
    const snapshot = await getJson<ThreadSnapshot>(s, `/threads/${threadId}`, 'alice')
    expect(snapshot.body.decisions?.at(-1)?.entries.map((e) => e.interruptId)).toEqual([publish.id, deploy.id])
    // The votes as cast: bob's on both, mgr's on the deploy alone (its record carries the batch's entries).
    expect(snapshot.body.decisions?.map((d) => d.decidedBy)).toEqual(['bob', 'mgr'])
    expect(snapshot.body.decisions?.[0]?.entries.map((e) => e.interruptId)).toEqual([publish.id, deploy.id])
  })

  it('a staging deploy is decided by one answer, the owner included', async () => {
    const s = await start()
    const { threadId, interrupts } = await ask(s, 'deploy v7 to staging')
    const decided = await postDecision<DecisionAccepted>(
      s,
      threadId,
      { runId: 'run_own', resume: interrupts.map((i) => resolved(i)) },
      'alice',
    )
    expect(decided.status).toBe(202)
    expect(decided.body.pending).toBeUndefined()
    await expect
      .poll(() => deployments(s, threadId), { timeout: 15_000 })
      .toMatchObject([{ version: 'v7', environment: 'staging' }])
  })
})
