/**
 * The client against the real agent server on 127.0.0.1 (SQLite in a temporary directory, the scripted release
 * assistant): the engineer `eng` asks for a deploy, the manager `mgr` — the only principal the `deploy` tool accepts
 * as approver — decides it from a script. Nothing is mocked; a test that cuts connections wraps `fetch`.
 */
import { threadKey } from '@interlude/agent-server'
import { releaseAssistant } from '@interlude/agent-server/demo'
import type { ReleaseState } from '@interlude/agent-server/demo'
import { interruptsOf, newThreadId, postRun, runInput, startTestServer, TOKENS } from '@interlude/agent-server/testing'
import type { TestServer } from '@interlude/agent-server/testing'
import { userMessage } from '@interlude/agent-server/testing'
import type { AgUiEvent, Interrupt } from '@interlude/protocol'
import { EventType } from '@interlude/protocol'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { approveAll, denyAll } from './decision-entries.ts'
import { decisionOf } from './decision-event.ts'
import { createDecisionsClient } from './decisions-client.ts'
import type { FollowedEvent } from './follow.ts'
import { failure } from './test-utils/failure.ts'

let server: TestServer

beforeAll(async () => {
  const agent = releaseAssistant()
  // "The engineer may not approve their own deploy": only mgr decides deploy approvals (docs/approvals.md).
  const tools = (agent.tools ?? []).map((tool) => (tool.name === 'deploy' ? { ...tool, approvers: ['mgr'] } : tool))
  server = await startTestServer({ agent: { ...agent, tools }, approvers: ['mgr'] })
})
afterAll(async () => {
  await server.dispose()
})

const as = (principal: keyof typeof TOKENS, fetchImpl?: typeof fetch) =>
  createDecisionsClient({
    baseUrl: server.baseUrl,
    token: TOKENS[principal],
    ...(fetchImpl ? { fetch: fetchImpl } : {}),
  })

/** eng asks for a deploy; the run pauses on publish_release and deploy. */
async function engineersDeploy(): Promise<{ threadId: string; interrupts: Interrupt[] }> {
  const threadId = newThreadId()
  const answer = await postRun(server, runInput(threadId, [userMessage('deploy v2.1 to production')]), {
    principal: 'eng',
  })
  const interrupts = interruptsOf(answer.events)
  expect(interrupts.map((i) => i.reason)).toEqual(['tool_call', 'tool_call'])
  return { threadId, interrupts }
}

/** mgr decides eng's threads: thread ids are per owner, so it names the owner (docs/protocol.md#thread-ids). */
const ENG = { owner: 'eng' } as const

const deployments = async (threadId: string) =>
  ((await as('mgr').snapshot(threadId, ENG)).state as ReleaseState).deployments

describe('the pending inbox', () => {
  it("lists the engineer's deploys for mgr, page by page, and nothing for a stranger", async () => {
    const older = await engineersDeploy()
    const newer = await engineersDeploy()
    const seen: string[] = []
    for await (const batch of as('mgr').pendingBatches({ limit: 1 })) {
      seen.push(batch.threadId)
      if (batch.threadId === older.threadId) {
        expect(batch.owner).toBe('eng')
        expect(batch.interrupts.map((i) => i.id)).toEqual(older.interrupts.map((i) => i.id))
      }
    }
    // Newest first; other tests' batches may be listed too.
    expect(seen.filter((id) => id === older.threadId || id === newer.threadId)).toEqual([
      newer.threadId,
      older.threadId,
    ])
    const strangers = await as('bob').pending()
    expect(strangers.items.map((b) => b.threadId)).not.toContain(older.threadId)
    expect(strangers.items.map((b) => b.threadId)).not.toContain(newer.threadId)
    // Tidy: these two do not linger in the other tests' inbox reads.
    for (const { threadId, interrupts } of [older, newer])
      await as('mgr').decide(threadId, { ...ENG, resume: denyAll(interrupts) })
  })
})

describe('deciding', () => {
  it('mgr approves: 202, the run finishes with the decision record, one deployment; the same runId again changes nothing', async () => {
    const { threadId, interrupts } = await engineersDeploy()
    const mgr = as('mgr')
    const runId = `run_mgr_${crypto.randomUUID()}`
    const resume = approveAll(interrupts, { reason: 'change window' })
    expect(await mgr.decide(threadId, { ...ENG, runId, resume })).toEqual({ threadId, runId })

    const view = await mgr.waitForRun(threadId, runId, { ...ENG, pollMs: 20 })
    expect(view.status).toBe('finished')
    expect(view.decision).toMatchObject({ threadId, runId, decidedBy: 'mgr', via: 'api' })
    expect(view.decision?.interruptIds).toEqual(interrupts.map((i) => i.id))
    expect(await deployments(threadId)).toEqual([
      expect.objectContaining({ version: 'v2.1', environment: 'production' }),
    ])

    // A retry of the same decision (a bot that never saw the 202) is admitted as the same run, which ran once.
    expect(await mgr.decide(threadId, { ...ENG, runId, resume })).toEqual({ threadId, runId })
    expect((await mgr.run(threadId, runId, ENG)).status).toBe('finished')
    expect(await deployments(threadId)).toHaveLength(1)
    const snapshot = await mgr.snapshot(threadId, ENG)
    expect(snapshot.decisions?.map((d) => d.runId)).toEqual([runId])

    // The same decision under another runId, and another decision: the server's codes, with details.runId.
    const again = await failure(mgr.decide(threadId, { ...ENG, resume }))
    expect(again.code).toBe('ALREADY_RESUMED')
    expect(again.details).toEqual({ runId })
    const other = await failure(mgr.decide(threadId, { ...ENG, resume: denyAll(interrupts) }))
    expect(other.code).toBe('DECISION_CONFLICT')
    expect(other.details).toEqual({ runId })
  })

  it('typed refusals: a bad entry is RESUME_PAYLOAD_INVALID with details, a stranger gets THREAD_NOT_FOUND', async () => {
    const { threadId, interrupts } = await engineersDeploy()
    const [publish, deploy] = interrupts
    const bad = await failure(
      as('mgr').decide(threadId, {
        ...ENG,
        resume: approveAll(interrupts, { payloads: { [deploy!.id]: { approved: 'yes please' } } }),
      }),
    )
    expect(bad.code).toBe('RESUME_PAYLOAD_INVALID')
    expect(bad.status).toBe(422)
    const errors = (bad.details as { errors: Record<string, { path: string; keyword: string }[]> }).errors
    expect(Object.keys(errors)).toEqual([deploy!.id])
    expect(errors[deploy!.id]![0]).toMatchObject({ keyword: 'type' })
    expect(errors[publish!.id]).toBeUndefined()

    for (const call of [
      // Naming the owner changes nothing for a principal who may not decide.
      as('bob').decide(threadId, { ...ENG, resume: approveAll(interrupts) }),
      as('bob').snapshot(threadId, ENG),
      as('bob').run(threadId, 'run_x', ENG),
      as('bob').snapshot(threadId),
    ]) {
      const stranger = await failure(call)
      expect(stranger.code).toBe('THREAD_NOT_FOUND')
      expect(stranger.message).toBe('Thread not found.')
    }
    // Nothing was decided: the batch is still open for mgr.
    expect((await as('mgr').snapshot(threadId, ENG)).interrupts?.map((i) => i.id)).toEqual(interrupts.map((i) => i.id))
  })
})

/** A network that drops each of the first `cuts` event streams after `bytes` bytes, mid-frame. */
function droppingFetch(cuts: number, bytes: number) {
  const urls: string[] = []
  const lastEventIds: (string | null)[] = []
  const fetchImpl: typeof fetch = async (input, init) => {
    const response = await globalThis.fetch(input, init)
    const url = String(input)
    if (!url.includes('/events')) return response
    urls.push(url)
    lastEventIds.push(new Headers(init?.headers).get('last-event-id'))
    if (urls.length > cuts || !response.body) return response
    const reader = response.body.getReader()
    let sent = 0
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const { done, value } = await reader.read()
        if (done) return controller.close()
        const room = bytes - sent
        if (value.length >= room) {
          controller.enqueue(value.subarray(0, room))
          await reader.cancel()
          return controller.error(new TypeError('terminated'))
        }
        sent += value.length
        controller.enqueue(value)
      },
      cancel: () => reader.cancel(),
    })
    return new Response(body, { status: response.status, headers: response.headers })
  }
  return { fetch: fetchImpl, urls, lastEventIds }
}

describe('follow', () => {
  it('receives the decision event and the continuation, across dropped connections, each event once', async () => {
    const { threadId, interrupts } = await engineersDeploy()
    const network = droppingFetch(3, 700)
    const controller = new AbortController()
    const runId = `run_mgr_${crypto.randomUUID()}`
    const seen: FollowedEvent[] = []
    const following = (async () => {
      for await (const item of as('mgr', network.fetch).follow(threadId, {
        ...ENG,
        signal: controller.signal,
        backoff: { initialMs: 1, maxMs: 20 },
      })) {
        seen.push(item)
        const e = item.event as AgUiEvent & { runId?: string }
        if (e.type === EventType.RUN_FINISHED && e.runId === runId) controller.abort()
      }
    })()
    await as('mgr').decide(threadId, { ...ENG, runId, resume: approveAll(interrupts) })
    await following

    const ids = seen.map((s) => s.id)
    expect(ids.every((id, i) => i === 0 || id > ids[i - 1]!)).toBe(true)
    expect(ids[0]).toBe(1)
    // The whole log arrived: as many events as the server stored, none twice.
    expect(ids).toEqual((await server.store.readEvents(threadKey('eng', threadId), { afterSeq: 0 })).map((e) => e.seq))
    // The connections really were cut, and each reconnect asked for what followed the last event delivered.
    expect(network.urls.length).toBeGreaterThan(3)
    expect(network.lastEventIds.slice(1).map(Number)).toEqual(
      network.lastEventIds
        .slice(1)
        .map((id) => Number(id))
        .sort((a, b) => a - b),
    )

    const decisionAt = seen.findIndex((s) => decisionOf(s.event) !== undefined)
    expect(decisionOf(seen[decisionAt]!.event)).toMatchObject({ runId, decidedBy: 'mgr', via: 'api' })
    expect(seen[decisionAt - 1]!.event).toMatchObject({ type: EventType.RUN_STARTED, runId })
    const continuation = seen.slice(decisionAt).map((s) => s.event)
    expect(
      continuation
        .filter((e) => e.type === EventType.TOOL_CALL_RESULT)
        .map((e) => (e as { toolCallId: string }).toolCallId),
    ).toEqual(interrupts.map((i) => i.toolCallId))
    expect(continuation.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, runId, outcome: { type: 'success' } })
  })
})
