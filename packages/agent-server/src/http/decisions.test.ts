import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { DECISION_EVENT_NAME, EventType } from '@interlude/protocol'
import type {
  DecisionRecord,
  Interrupt,
  PendingBatchPage,
  ResumeEntry,
  RunView,
  ThreadSnapshot,
} from '@interlude/protocol'
import { DecisionRecordSchema, ThreadSnapshotSchema } from '@interlude/protocol/schemas'
import type { ReleaseState } from '../demo/release-assistant.ts'
import { releaseAssistant } from '../demo/release-assistant.ts'
import { until } from '../test-utils/child-server.ts'
import { getJson, postDecision } from '../test-utils/decisions.ts'
import { dumpStore, interruptsOf, newThreadId, resumeInput, runInput, userMessage } from '../test-utils/harness.ts'
import type { InProcessServer } from '../test-utils/in-process.ts'
import { serversPerTest } from '../test-utils/in-process.ts'
import { resolved } from '../test-utils/resume-entries.ts'
import { threadKey } from '../store/thread-key.ts'

/** The decider on eng's threads (threads are per owner: `?owner=`, docs/protocol.md#thread-ids). */
const MGR = { principal: 'mgr', owner: 'eng' } as const

/**
 * Approvals from anywhere over HTTP (docs/approvals.md): a manager decides an engineer's deploy through the decisions
 * API, the record of who decided reaches the snapshot, the run view and the log, nobody else learns anything, and
 * every channel shares one admission (idempotency, ALREADY_RESUMED / DECISION_CONFLICT).
 */
const server = serversPerTest({ approvers: ['mgr'] })

async function pausedDeploy(s: InProcessServer): Promise<{ threadId: string; interrupts: Interrupt[] }> {
  const threadId = newThreadId()
  const first = await s.postRun(runInput(threadId, [userMessage('deploy v3 to production')]), { principal: 'eng' })
  const interrupts = interruptsOf(first.events)
  expect(interrupts).toHaveLength(2)
  return { threadId, interrupts }
}

const approveAll = (interrupts: readonly Interrupt[]): ResumeEntry[] => interrupts.map((i) => resolved(i))
const runView = async (s: InProcessServer, threadId: string, runId: string) =>
  getJson<RunView>(s, `/threads/${threadId}/runs/${runId}?owner=eng`, 'mgr')

describe('POST {base}/threads/:threadId/decisions', () => {
  it("a decider approves another owner's deploy: 202, one deployment, the record everywhere, nobody else sees a thing", async () => {
    const s = await server()
    const { threadId, interrupts } = await pausedDeploy(s)
    const entries = approveAll(interrupts)

    // A non-decider: 404 on every route of the thread, and not one row changes.
    const before = dumpStore(s.dbPath)
    // Naming the owner changes nothing for a principal who may not decide.
    const BOB = { principal: 'bob', owner: 'eng' } as const
    const foreign = await postDecision(s, threadId, { runId: `run_${randomUUID()}`, resume: entries }, BOB)
    expect(foreign).toMatchObject({ status: 404, error: { code: 'THREAD_NOT_FOUND' } })
    for (const path of [`/threads/${threadId}`, `/threads/${threadId}/events`, `/threads/${threadId}/runs/x`].flatMap(
      (p) => [p, `${p}?owner=eng`],
    )) {
      expect((await getJson(s, path, 'bob')).error?.code).toBe('THREAD_NOT_FOUND')
    }
    expect((await getJson<PendingBatchPage>(s, '/interrupts', 'bob')).body.items).toEqual([])
    expect(dumpStore(s.dbPath)).toEqual(before)

    // The decider finds it in its inbox, with the owner and the title of the thread.
    const inbox = await getJson<PendingBatchPage>(s, '/interrupts?status=pending', 'mgr')
    expect(inbox.body.items).toEqual([expect.objectContaining({ threadId, owner: 'eng', interrupts })])

    const runId = `run_${randomUUID()}`
    const accepted = await postDecision(s, threadId, { runId, resume: entries }, MGR)
    expect(accepted).toMatchObject({ status: 202, body: { threadId, runId } })
    // Admission time is reported as for a resume run.
    expect(accepted.headers.get('server-timing')).toMatch(/^turn;dur=\d+\.\d{3}, admission;dur=\d+\.\d{3}$/)
    await until(async () => (await runView(s, threadId, runId)).body.status === 'finished', 'the turn to finish')

    const view = (await runView(s, threadId, runId)).body
    expect(view).toMatchObject({ threadId, runId, status: 'finished', outcome: { type: 'success' } })
    const record: DecisionRecord = view.decision!
    expect(record).toMatchObject({
      threadId,
      runId,
      interruptIds: interrupts.map((i) => i.id),
      decidedBy: 'mgr',
      via: 'api',
    })
    expect(record.entries.map((e) => e.interruptId)).toEqual(interrupts.map((i) => i.id))

    const snapshot = (await getJson<ThreadSnapshot>(s, `/threads/${threadId}?owner=eng`, 'mgr')).body
    expect(snapshot.decisions).toEqual([record])
    expect(ThreadSnapshotSchema.safeParse(snapshot).success).toBe(true)
    expect(DecisionRecordSchema.safeParse(record).success).toBe(true)
    expect((snapshot.state as ReleaseState).deployments).toEqual([
      { operationId: interrupts[1]!.toolCallId, version: 'v3', environment: 'production' },
    ])
    expect((await getJson<ThreadSnapshot>(s, `/threads/${threadId}`, 'eng')).body.decisions).toEqual([record])

    // The log: the resumed run's RUN_STARTED, then the decision, for replays and followers alike.
    const log = await s.threadEvents(threadId, { principal: 'mgr', owner: 'eng' })
    const started = log.events.findIndex((e) => e.type === EventType.RUN_STARTED && 'runId' in e && e.runId === runId)
    expect(log.events[started + 1]).toEqual({ type: EventType.CUSTOM, name: DECISION_EVENT_NAME, value: record })
    expect(log.events[log.events.length - 1]).toMatchObject({ type: EventType.RUN_FINISHED, runId })

    // The owner's chat resume afterwards joins or conflicts; it never runs again.
    const joined = await s.postRun(resumeInput(threadId, entries), { principal: 'eng' })
    expect(joined.error).toMatchObject({ code: 'ALREADY_RESUMED', details: { runId } })
    const denied = interrupts.map((i) => resolved(i, { approved: false }))
    expect((await s.postRun(resumeInput(threadId, denied), { principal: 'eng' })).error).toMatchObject({
      code: 'DECISION_CONFLICT',
      details: { runId },
    })

    // The same runId and entries again: 202 with the same run, which executed once.
    const again = await postDecision(s, threadId, { runId, resume: entries }, MGR)
    expect(again).toMatchObject({ status: 202, body: { threadId, runId } })
    const after = (await getJson<ThreadSnapshot>(s, `/threads/${threadId}`, 'eng')).body
    expect((after.state as ReleaseState).deployments).toHaveLength(1)
    expect(after.decisions).toHaveLength(1)
    expect((await getJson<PendingBatchPage>(s, '/interrupts', 'mgr')).body.items).toEqual([])
  })

  it('two owners pause on one thread id: the decider reaches the one it names with ?owner=, the other stays open', async () => {
    const s = await server()
    const threadId = `support-${randomUUID()}`
    const paused: Record<'eng' | 'alice', Interrupt[]> = { eng: [], alice: [] }
    for (const principal of ['eng', 'alice'] as const) {
      const first = await s.postRun(runInput(threadId, [userMessage('deploy v3 to production')]), { principal })
      paused[principal] = interruptsOf(first.events)
      expect(paused[principal]).toHaveLength(2)
    }
    // The inbox lists both, each with its owner.
    const inbox = (await getJson<PendingBatchPage>(s, '/interrupts', 'mgr')).body.items.filter(
      (b) => b.threadId === threadId,
    )
    expect(inbox.map((b) => b.owner).sort()).toEqual(['alice', 'eng'])

    // alice's interrupts under eng's address are unknown there: nothing of alice's moves.
    const crossed = await postDecision(
      s,
      threadId,
      { runId: `run_${randomUUID()}`, resume: approveAll(paused.alice) },
      MGR,
    )
    expect(crossed.error?.code).toBe('RESUME_UNKNOWN_INTERRUPT')

    const runId = `run_${randomUUID()}`
    expect((await postDecision(s, threadId, { runId, resume: approveAll(paused.eng) }, MGR)).status).toBe(202)
    await until(async () => (await runView(s, threadId, runId)).body.status === 'finished', 'the turn to finish')
    const engs = (await getJson<ThreadSnapshot>(s, `/threads/${threadId}?owner=eng`, 'mgr')).body
    const alices = (await getJson<ThreadSnapshot>(s, `/threads/${threadId}?owner=alice`, 'mgr')).body
    expect(engs.interrupts).toBeUndefined()
    expect(engs.decisions?.map((d) => [d.threadId, d.runId])).toEqual([[threadId, runId]])
    expect(alices.interrupts?.map((i) => i.id)).toEqual(paused.alice.map((i) => i.id))
    expect(alices.decisions).toBeUndefined()
    // The run view of eng's run does not exist on alice's thread.
    expect((await getJson(s, `/threads/${threadId}/runs/${runId}?owner=alice`, 'mgr')).error?.code).toBe(
      'RUN_NOT_FOUND',
    )
    // alice's own chat resume still works on hers.
    const resumed = await s.postRun(resumeInput(threadId, approveAll(paused.alice)), { principal: 'alice' })
    expect(resumed.status).toBe(200)
    expect(resumed.events[resumed.events.length - 1]).toMatchObject({ type: EventType.RUN_FINISHED, threadId })
  })

  it('a decider reads but never writes as the owner: no input, no cancel, not in its thread list', async () => {
    const s = await server()
    const { threadId, interrupts } = await pausedDeploy(s)
    expect((await getJson<ThreadSnapshot>(s, `/threads/${threadId}?owner=eng`, 'mgr')).body.interrupts).toEqual(
      interrupts,
    )
    const before = dumpStore(s.dbPath)
    expect((await s.postRun(runInput(threadId, [userMessage('hi')]), MGR)).error?.code).toBe('THREAD_NOT_FOUND')
    const firstRun = (await s.store.listDecisions(threadKey('eng', threadId))).length
    expect(firstRun).toBe(0)
    const cancel = await s.request(`/threads/${threadId}/runs/whatever/cancel`, {
      method: 'POST',
      ...MGR,
      headers: { 'Content-Type': 'application/json' },
      body: '{}',
    })
    expect(cancel.status).toBe(404)
    expect((await getJson<{ threads: unknown[] }>(s, '/threads', 'mgr')).body.threads).toEqual([])
    expect(dumpStore(s.dbPath)).toEqual(before)
  })

  it('a tool with approvers: ["mgr"] refuses the owner through the API (404, nothing changed) and accepts mgr', async () => {
    const base = releaseAssistant()
    const tools = (base.tools ?? []).map((tool) => (tool.name === 'deploy' ? { ...tool, approvers: ['mgr'] } : tool))
    const s = await server({ agent: { ...base, tools } })
    const { threadId, interrupts } = await pausedDeploy(s)
    const body = { runId: `run_${randomUUID()}`, resume: approveAll(interrupts) }
    const before = dumpStore(s.dbPath)
    expect((await postDecision(s, threadId, body, 'eng')).error?.code).toBe('THREAD_NOT_FOUND')
    expect((await getJson<PendingBatchPage>(s, '/interrupts', 'eng')).body.items).toEqual([])
    expect(dumpStore(s.dbPath)).toEqual(before)
    expect((await postDecision(s, threadId, body, MGR)).status).toBe(202)
    await until(async () => (await runView(s, threadId, body.runId)).body.status === 'finished', 'the turn to finish')
    // The owner still reads its own thread, including who decided.
    const snapshot = (await getJson<ThreadSnapshot>(s, `/threads/${threadId}`, 'eng')).body
    expect(snapshot.decisions?.map((d) => d.decidedBy)).toEqual(['mgr'])
  })

  it('the same runId with other entries, or the runId of an input run, is DECISION_CONFLICT', async () => {
    const s = await server()
    const threadId = newThreadId()
    const input = runInput(threadId, [userMessage('deploy v4 to staging')])
    const interrupts = interruptsOf((await s.postRun(input, { principal: 'eng' })).events)
    const runId = `run_${randomUUID()}`
    expect((await postDecision(s, threadId, { runId, resume: approveAll(interrupts) }, MGR)).status).toBe(202)
    const other = interrupts.map((i) => resolved(i, { approved: false }))
    expect((await postDecision(s, threadId, { runId, resume: other }, MGR)).error).toMatchObject({
      code: 'DECISION_CONFLICT',
      details: { runId },
    })
    const reused = await postDecision(s, threadId, { runId: input.runId, resume: other }, MGR)
    expect(reused.error).toMatchObject({ code: 'DECISION_CONFLICT', details: { runId: input.runId } })
    expect((await s.store.listDecisions(threadKey('eng', threadId))).map((d) => d.runId)).toEqual([runId])
  })
})
