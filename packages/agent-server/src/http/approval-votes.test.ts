import { describe, expect, it } from 'vitest'
import { DECISION_EVENT_NAME, EventType } from '@interlude/protocol'
import type { DecisionAccepted, DecisionRecord, PendingBatchPage, ThreadSnapshot } from '@interlude/protocol'
import { getJson, postDecision } from '../test-utils/decisions.ts'
import { interruptsOf, newThreadId, resumeInput, runInput, userMessage } from '../test-utils/harness.ts'
import type { InProcessServer } from '../test-utils/in-process.ts'
import { serversPerTest } from '../test-utils/in-process.ts'
import { resolved } from '../test-utils/resume-entries.ts'
import { call, rightsAgent } from '../test-utils/rights-agents.ts'

/**
 * Votes (docs/approvals.md#organisation-policies): a `deploy` that needs 2 approvals of alice, bob and mgr, never the
 * requester's own. Through the real routes over a SQLite file; the owner is alice, who is one of the three.
 */
const server = serversPerTest({ approvers: ['alice', 'bob', 'mgr'] })
const ALICE_THREAD = { owner: 'alice' } as const

function quorumServer() {
  const { agent, ran } = rightsAgent({
    deploy: { approvers: undefined, policy: { quorum: 2, of: ['alice', 'bob', 'mgr'], notRequester: true } },
  })
  return { ran, start: () => server({ agent }) }
}

async function paused(s: InProcessServer) {
  const threadId = newThreadId()
  const run = await s.postRun(runInput(threadId, [userMessage(call('deploy', { env: 'production' }))]), {
    principal: 'alice',
  })
  expect(run.status).toBe(200)
  const interrupts = interruptsOf(run.events)
  expect(interrupts).toHaveLength(1)
  return { threadId, interrupt: interrupts[0]! }
}

const by = (principal: 'bob' | 'mgr' | 'eng' | 'alice') => ({ principal, ...ALICE_THREAD })
const votesOf = (snapshot: ThreadSnapshot) => (snapshot.decisions ?? []).filter((d: DecisionRecord) => d.vote)

describe('quorum 2 of 3 with notRequester', () => {
  it("refuses the owner's vote, pauses on one approval, continues once on the second", async () => {
    const { ran, start } = quorumServer()
    const s = await start()
    const { threadId, interrupt } = await paused(s)

    // The requester may not vote (404, as for anyone without the right), nor may a principal outside `of`.
    const own = await postDecision(s, threadId, { runId: 'run_own', resume: [resolved(interrupt)] }, 'alice')
    expect(own).toMatchObject({ status: 404, error: { code: 'THREAD_NOT_FOUND' } })
    const outsider = await postDecision(s, threadId, { runId: 'run_eng', resume: [resolved(interrupt)] }, by('eng'))
    expect(outsider).toMatchObject({ status: 404, error: { code: 'THREAD_NOT_FOUND' } })
    // Each voter's inbox row says what the interrupt still needs.
    const opened = await getJson<PendingBatchPage>(s, '/interrupts?status=pending', 'bob')
    expect(opened.body.items.find((b) => b.threadId === threadId)?.votes).toEqual([
      { interruptId: interrupt.id, stage: 0, approvals: 0, quorum: 2 },
    ])

    const first = await postDecision<DecisionAccepted>(
      s,
      threadId,
      { runId: 'run_bob', resume: [resolved(interrupt)] },
      by('bob'),
    )
    expect(first.status).toBe(202)
    expect(first.body.pending).toEqual([{ interruptId: interrupt.id, stage: 0, approvals: 1, quorum: 2 }])
    // The vote is in the log at once, as a short run of its own (a follower — the owner's open chat — sees it live):
    // RUN_STARTED, the vote's record, RUN_FINISHED with the interrupt still open.
    const voteRun = (await s.threadEvents(threadId, { principal: 'alice' })).events.slice(-3)
    expect(voteRun).toMatchObject([
      { type: EventType.RUN_STARTED, runId: 'run_bob' },
      { type: EventType.CUSTOM, name: DECISION_EVENT_NAME, value: { decidedBy: 'bob', vote: true, runId: 'run_bob' } },
      {
        type: EventType.RUN_FINISHED,
        runId: 'run_bob',
        outcome: { type: 'interrupt', interrupts: [{ id: interrupt.id }] },
      },
    ])
    // The same vote again answers the same; another vote of bob's is refused.
    const again = await postDecision(s, threadId, { runId: 'run_bob', resume: [resolved(interrupt)] }, by('bob'))
    expect(again).toMatchObject({ status: 202, body: { pending: [{ approvals: 1 }] } })
    const twice = await postDecision(s, threadId, { runId: 'run_bob2', resume: [resolved(interrupt)] }, by('bob'))
    expect(twice).toMatchObject({ status: 409, error: { code: 'ALREADY_VOTED' } })

    // Still paused: the snapshot shows the interrupt and bob's vote; bob's inbox no longer lists it, mgr's does.
    const snapshot = await getJson<ThreadSnapshot>(s, `/threads/${threadId}?owner=alice`, 'mgr')
    expect(snapshot.body.interrupts?.map((i) => i.id)).toEqual([interrupt.id])
    expect(votesOf(snapshot.body)).toMatchObject([{ decidedBy: 'bob', vote: true, stage: 0, runId: 'run_bob' }])
    const bobInbox = await getJson<PendingBatchPage>(s, '/interrupts?status=pending', 'bob')
    expect(bobInbox.body.items.map((b) => b.threadId)).not.toContain(threadId)
    const mgrInbox = await getJson<PendingBatchPage>(s, '/interrupts?status=pending', 'mgr')
    expect(mgrInbox.body.items.find((b) => b.threadId === threadId)?.votes).toEqual([
      { interruptId: interrupt.id, stage: 0, approvals: 1, quorum: 2 },
    ])
    expect(ran).toEqual([])

    const second = await postDecision<DecisionAccepted>(
      s,
      threadId,
      { runId: 'run_mgr', resume: [resolved(interrupt)] },
      by('mgr'),
    )
    expect(second.status).toBe(202)
    expect(second.body.pending).toBeUndefined()
    await expect.poll(() => ran, { timeout: 15_000 }).toEqual([{ principal: 'alice', env: 'production' }])
    const after = await getJson<ThreadSnapshot>(s, `/threads/${threadId}`, 'alice')
    expect(votesOf(after.body)).toMatchObject([
      { decidedBy: 'bob', vote: true, runId: 'run_bob' },
      { decidedBy: 'mgr', vote: true, runId: 'run_mgr', entries: [{ interruptId: interrupt.id, status: 'resolved' }] },
    ])
    // bob's vote run, then the continuation, which carries the votes again, the deciding one last (a follower that
    // joins only then sees both).
    const log = await s.threadEvents(threadId, { principal: 'alice' })
    const decisions = log.events.filter((e) => e.type === EventType.CUSTOM && e.name === DECISION_EVENT_NAME)
    expect(decisions.map((e) => (e as { value: DecisionRecord }).value.decidedBy)).toEqual(['bob', 'bob', 'mgr'])
  })

  it('a denial by any voter denies the interrupt at once', async () => {
    const { ran, start } = quorumServer()
    const s = await start()
    const { threadId, interrupt } = await paused(s)
    const denied = await postDecision<DecisionAccepted>(
      s,
      threadId,
      { runId: 'run_no', resume: [resolved(interrupt, { approved: false, reason: 'not today' })] },
      by('mgr'),
    )
    expect(denied.status).toBe(202)
    expect(denied.body.pending).toBeUndefined()
    await expect
      .poll(async () => (await getJson<ThreadSnapshot>(s, `/threads/${threadId}`, 'alice')).body.status)
      .toBe('idle')
    const snapshot = await getJson<ThreadSnapshot>(s, `/threads/${threadId}`, 'alice')
    expect(snapshot.body.interrupts).toBeUndefined()
    expect(votesOf(snapshot.body)).toMatchObject([{ decidedBy: 'mgr', vote: true }])
    expect(ran).toEqual([])
  })

  it('a vote sent as a resume run is answered 202 with what is missing; the second continues the turn', async () => {
    const { ran, start } = quorumServer()
    const s = await start()
    const { threadId, interrupt } = await paused(s)
    const vote = await s.request(`/runs?owner=alice`, {
      method: 'POST',
      principal: 'bob',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(resumeInput(threadId, [resolved(interrupt)], { runId: 'run_bob_resume' })),
    })
    expect(vote.status).toBe(202)
    expect(await vote.json()).toEqual({
      threadId,
      runId: 'run_bob_resume',
      pending: [{ interruptId: interrupt.id, stage: 0, approvals: 1, quorum: 2 }],
    })
    const last = await s.postRun(resumeInput(threadId, [resolved(interrupt)], { runId: 'run_mgr_resume' }), by('mgr'))
    expect(last.status).toBe(200)
    expect(ran).toEqual([{ principal: 'alice', env: 'production' }])
  })
})
