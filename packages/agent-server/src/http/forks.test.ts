import { describe, expect, it } from 'vitest'
import type { RunView, ThreadForkList } from '@interlude/protocol'
import { readJson } from '../test-utils/decisions.ts'
import {
  countingDemo,
  deployedThread,
  parentBytes,
  postFork,
  serverPerTest,
  snapshotOf,
  stateOf,
} from '../test-utils/fork-kit.ts'
import { interruptsOf, resumeInput, runInput, userMessage } from '../test-utils/harness.ts'
import type { InProcessServer } from '../test-utils/in-process.ts'
import { cancelled, resolved } from '../test-utils/resume-entries.ts'
import { storeBackends } from '../test-utils/store-backends.ts'
import { threadKey } from '../store/thread-key.ts'

/**
 * Time travel, server side (docs/time-travel.md), through the real server on SQLite and PostgreSQL with the demo
 * agent: a fork copies a prefix of the parent, executes nothing by itself, never changes the parent, and a fork at a
 * batch pauses at the same question without a model call.
 */

const backends = await storeBackends('thread forks on PostgreSQL')

describe.each(backends)('thread forks on %s', (_name, start) => {
  const serve = serverPerTest(start)

  it('a fork after an approved deploy: the parent is byte-identical, the fork runs nothing, its state has it once', async () => {
    const demo = countingDemo()
    const s = await serve(demo.agent)
    const parent = await deployedThread(s)
    const before = await parentBytes(s, parent.threadId)
    const { body: snapshot } = await snapshotOf(s, parent.threadId)
    const last = snapshot.messages[snapshot.messages.length - 1]!
    expect(last.role).toBe('assistant')
    const calls = demo.modelCalls.length

    const fork = await postFork(s, parent.threadId, { at: { messageId: last.id } })
    expect(fork.status).toBe(201)
    expect(fork.body.parent).toEqual({ threadId: parent.threadId, at: { messageId: last.id } })
    expect(fork.body.threadId).toMatch(/^thread_/)

    expect(await parentBytes(s, parent.threadId)).toEqual(before)
    const { body: forked } = await snapshotOf(s, fork.body.threadId)
    expect(forked).toMatchObject({ status: 'idle', lastEventId: 0, parent: fork.body.parent })
    expect(forked.messages).toEqual(snapshot.messages)
    expect(stateOf(forked).deployments).toHaveLength(1)
    expect(stateOf(forked)).toEqual(snapshot.state)
    expect(forked.interrupts).toBeUndefined()
    // Settled in the ledger as in the parent: nothing is open, nothing ran again.
    const ledger = await s.store.listToolCalls(threadKey('alice', fork.body.threadId))
    expect(ledger.map((c) => c.status).sort()).toEqual(['succeeded', 'succeeded'])
    expect(demo.deployments).toHaveLength(1)
    expect(demo.modelCalls).toHaveLength(calls)

    const forks = await readJson<ThreadForkList>(await s.request(`/threads/${parent.threadId}/forks`))
    expect(forks.status).toBe(200)
    expect(forks.body.items).toEqual([
      { threadId: fork.body.threadId, at: { messageId: last.id }, createdAt: expect.any(String) as string },
    ])
  })

  it('an edited first message ("deploy v9 to staging"): a new batch for v9, approved, runs once in the fork only', async () => {
    const demo = countingDemo()
    const s = await serve(demo.agent)
    const parent = await deployedThread(s)
    const before = await parentBytes(s, parent.threadId)
    const edit = { messageId: parent.userMessageId, content: 'deploy v9 to staging' }
    const fork = await postFork(s, parent.threadId, { at: { messageId: parent.userMessageId }, edit })
    expect(fork.status).toBe(201)
    const { body: forked } = await snapshotOf(s, fork.body.threadId)
    expect(forked.messages).toEqual([{ id: parent.userMessageId, role: 'user', content: 'deploy v9 to staging' }])
    expect(stateOf(forked).deployments).toEqual([])

    const run = await s.postRun(runInput(fork.body.threadId, []))
    expect(run.status).toBe(200)
    const asked = interruptsOf(run.events)
    expect(asked.map((i) => i.message)).toEqual(['Publish release v9?', 'Deploy v9 to staging?'])
    const approved = await s.postRun(
      resumeInput(
        fork.body.threadId,
        asked.map((i) => resolved(i)),
      ),
    )
    expect(approved.status).toBe(200)
    expect(demo.deployments).toEqual([
      { environment: 'production', version: 'v2.1' },
      { environment: 'staging', version: 'v9' },
    ])
    expect(stateOf((await snapshotOf(s, fork.body.threadId)).body).deployments).toMatchObject([
      { version: 'v9', environment: 'staging' },
    ])
    expect(await parentBytes(s, parent.threadId)).toEqual(before)
    expect(stateOf((await snapshotOf(s, parent.threadId)).body).deployments).toMatchObject([{ version: 'v2.1' }])
  })

  it('a fork at a decided batch pauses at the same question; denied there: nothing deployed, no model call first', async () => {
    const demo = countingDemo()
    const s = await serve(demo.agent)
    const parent = await deployedThread(s)
    const before = await parentBytes(s, parent.threadId)
    const calls = demo.modelCalls.length

    const fork = await postFork(s, parent.threadId, { at: { batchId: parent.batchId } })
    expect(fork.status).toBe(201)
    expect(demo.modelCalls).toHaveLength(calls)
    const { body: paused } = await snapshotOf(s, fork.body.threadId)
    expect(paused).toMatchObject({ status: 'interrupted', batchId: parent.batchId, parent: fork.body.parent })
    expect(paused.messages.map((m) => m.role)).toEqual(['user', 'assistant'])
    expect(stateOf(paused).deployments).toEqual([])
    const asked = paused.interrupts ?? []
    expect(asked.map((i) => i.message)).toEqual(parent.interrupts.map((i) => i.message))
    // New interrupt ids, new call ids (a new decision about a new call), a fresh deadline.
    for (const [i, question] of asked.entries()) {
      const original = parent.interrupts[i]!
      expect(question.id).not.toBe(original.id)
      expect(question.toolCallId).not.toBe(original.toolCallId)
      expect(Date.parse(question.expiresAt!)).toBeGreaterThanOrEqual(Date.parse(original.expiresAt!))
    }
    const assistant = paused.messages[1] as { toolCalls: { id: string }[] }
    expect(assistant.toolCalls.map((c) => c.id)).toEqual(asked.map((i) => i.toolCallId))

    const denied = await s.postRun(
      resumeInput(
        fork.body.threadId,
        asked.map((i) => resolved(i, { approved: false })),
      ),
    )
    expect(denied.status).toBe(200)
    expect(demo.modelCalls).toHaveLength(calls + 1)
    expect(demo.deployments).toHaveLength(1)
    const { body: after } = await snapshotOf(s, fork.body.threadId)
    expect(stateOf(after).deployments).toEqual([])
    expect(JSON.stringify(after.messages)).toMatch(/Nothing ran/)
    expect(await parentBytes(s, parent.threadId)).toEqual(before)
    expect(stateOf((await snapshotOf(s, parent.threadId)).body).deployments).toHaveLength(1)
  })

  it('a fork at a pending batch: both threads answer their own batch; the parent one runs its deploy once', async () => {
    const demo = countingDemo()
    const s = await serve(demo.agent)
    const open = await s.postRun(
      runInput('pending-parent', [{ id: 'u1', role: 'user', content: 'deploy v4 to staging' }]),
    )
    const questions = interruptsOf(open.events)
    const batchId = (open.events[0] as { runId: string }).runId
    const fork = await postFork(s, 'pending-parent', { at: { batchId }, threadId: 'pending-fork' })
    expect(fork.status).toBe(201)
    expect(fork.body.threadId).toBe('pending-fork')
    const forkQuestions = (await snapshotOf(s, 'pending-fork')).body.interrupts ?? []
    const deploysBefore = demo.deployments.length
    expect(
      (
        await s.postRun(
          resumeInput(
            'pending-fork',
            forkQuestions.map((i) => cancelled(i)),
          ),
        )
      ).status,
    ).toBe(200)
    expect(
      (
        await s.postRun(
          resumeInput(
            'pending-parent',
            questions.map((i) => resolved(i)),
          ),
        )
      ).status,
    ).toBe(200)
    expect(demo.deployments.slice(deploysBefore)).toEqual([{ environment: 'staging', version: 'v4' }])
    expect(stateOf((await snapshotOf(s, 'pending-fork')).body).deployments).toEqual([])
  })
  it('batchId, the id of the run that paused: on the open batch, the inbox row, the decision record, the run view', async () => {
    const s = await serve(countingDemo().agent)
    const open = await s.postRun(runInput('named', [{ id: 'u1', role: 'user', content: 'deploy v7 to staging' }]))
    const batchId = (open.events[0] as { runId: string }).runId
    expect((await snapshotOf(s, 'named')).body.batchId).toBe(batchId)
    const inbox = (await (await s.request('/interrupts?status=pending')).json()) as { items: { batchId?: string }[] }
    expect(inbox.items.map((i) => i.batchId)).toEqual([batchId])
    const paused = (await (await s.request(`/threads/named/runs/${batchId}`)).json()) as RunView
    expect(paused.batchId).toBe(batchId)
    const resumed = await s.postRun(
      resumeInput(
        'named',
        interruptsOf(open.events).map((i) => cancelled(i)),
      ),
    )
    const resumeRunId = (resumed.events[0] as { runId: string }).runId
    const { body: after } = await snapshotOf(s, 'named')
    expect(after.batchId).toBeUndefined()
    expect(after.decisions?.map((d) => d.batchId)).toEqual([batchId])
    const carried = (await (await s.request(`/threads/named/runs/${resumeRunId}`)).json()) as RunView
    expect(carried).toMatchObject({ batchId, decision: { batchId } })
  })
  it("a fork of a fork finds the state of a copied message, and of a fork's own batch, in its origin's log", async () => {
    const s = await serve(countingDemo().agent)
    const parent = await deployedThread(s)
    const firstTurnEnd = (await snapshotOf(s, parent.threadId)).body.messages.at(-1)!.id
    const second = await s.postRun(runInput(parent.threadId, [userMessage('deploy v3 to staging')]))
    const secondBatch = (second.events[0] as { runId: string }).runId
    await s.postRun(
      resumeInput(
        parent.threadId,
        interruptsOf(second.events).map((i) => resolved(i)),
      ),
    )
    const last = (await snapshotOf(s, parent.threadId)).body.messages.at(-1)!.id
    const a = await postFork(s, parent.threadId, { at: { messageId: last } })
    expect(stateOf((await snapshotOf(s, a.body.threadId)).body).deployments).toHaveLength(2)

    const b = await postFork(s, a.body.threadId, { at: { messageId: firstTurnEnd } })
    expect(b.status).toBe(201)
    expect(stateOf((await snapshotOf(s, b.body.threadId)).body).deployments).toMatchObject([{ version: 'v2.1' }])
    // A batch belongs to the thread where it paused: a fork at it is made there, not in a fork of that thread.
    const copied = await postFork(s, a.body.threadId, { at: { batchId: secondBatch } })
    expect([copied.status, copied.error?.code]).toEqual([400, 'INVALID_INPUT'])
    const c = await postFork(s, parent.threadId, { at: { batchId: secondBatch } })
    const d = await postFork(s, c.body.threadId, { at: { batchId: secondBatch } })
    expect(d.status).toBe(201)
    const { body: paused } = await snapshotOf(s, d.body.threadId)
    expect(paused.status).toBe('interrupted')
    expect(stateOf(paused).deployments).toMatchObject([{ version: 'v2.1' }])
  })
})

describe.each(backends)('fork refusals on %s', (_name, start) => {
  const serve = serverPerTest(start)
  const threadsOf = async (s: InProcessServer, principal: 'alice' | 'bob') =>
    ((await (await s.request('/threads?limit=100', { principal })).json()) as { threads: unknown[] }).threads.length

  it("another principal's fork is 404 and creates nothing; so is its forks list", async () => {
    const s = await serve()
    const parent = await deployedThread(s)
    const before = await parentBytes(s, parent.threadId)
    const [alice, bob] = [await threadsOf(s, 'alice'), await threadsOf(s, 'bob')]
    for (const at of [{ batchId: parent.batchId }, { messageId: parent.userMessageId }]) {
      const refused = await postFork(s, parent.threadId, { at }, { principal: 'bob' })
      expect(refused.status).toBe(404)
      expect(refused.error?.code).toBe('THREAD_NOT_FOUND')
    }
    expect((await s.request(`/threads/${parent.threadId}/forks`, { principal: 'bob' })).status).toBe(404)
    expect([await threadsOf(s, 'alice'), await threadsOf(s, 'bob')]).toEqual([alice, bob])
    expect(await parentBytes(s, parent.threadId)).toEqual(before)
    expect((await (await s.request(`/threads/${parent.threadId}/forks`)).json()) as ThreadForkList).toEqual({
      items: [],
    })
  })

  it('bad bodies are typed 4xx answers and write nothing', async () => {
    const s = await serve()
    const parent = await deployedThread(s)
    const { body: snapshot } = await snapshotOf(s, parent.threadId)
    const assistant = snapshot.messages.find((m) => m.role === 'assistant')!
    const before = await threadsOf(s, 'alice')
    const userAt = { messageId: parent.userMessageId }
    const bodies: [unknown, number, string][] = [
      [{}, 400, 'INVALID_INPUT'],
      [{ at: {} }, 400, 'INVALID_INPUT'],
      [{ at: { messageId: 'm', batchId: 'b' } }, 400, 'INVALID_INPUT'],
      [{ at: { messageId: parent.userMessageId }, extra: 1 }, 400, 'INVALID_INPUT'],
      [{ at: { messageId: 'no-such-message' } }, 400, 'INVALID_INPUT'],
      [{ at: { batchId: 'no-such-run' } }, 400, 'INVALID_INPUT'],
      [{ at: { messageId: parent.userMessageId }, threadId: 'has space' }, 400, 'INVALID_INPUT'],
      [{ at: { messageId: assistant.id }, edit: { messageId: assistant.id, content: 'x' } }, 400, 'INVALID_INPUT'],
      [
        { at: { messageId: assistant.id }, edit: { messageId: parent.userMessageId, content: 'x' } },
        400,
        'INVALID_INPUT',
      ],
      [{ at: { messageId: parent.userMessageId }, threadId: parent.threadId }, 409, 'THREAD_EXISTS'],
      [[1, 2], 400, 'INVALID_INPUT'],
      [{ at: userAt, edit: { ...userAt, content: 'x'.repeat(1024 * 1024) } }, 413, 'PAYLOAD_TOO_LARGE'],
    ]
    for (const [body, status, code] of bodies) {
      const refused = await postFork(s, parent.threadId, body as Record<string, unknown>)
      const shown = JSON.stringify(body).slice(0, 200)
      expect({ shown, status: refused.status, code: refused.error?.code }).toEqual({ shown, status, code })
    }
    const raw = await s.request(`/threads/${parent.threadId}/fork`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{"at":',
    })
    expect(raw.status).toBe(400)
    expect(await threadsOf(s, 'alice')).toBe(before)
    expect((await (await s.request(`/threads/${parent.threadId}/forks`)).json()) as ThreadForkList).toEqual({
      items: [],
    })
  })

  it('an edit that would take the fork past the thread cap is 413 THREAD_TOO_LARGE and writes nothing', async () => {
    const s = await start({ agent: countingDemo().agent, limits: { threadMaxBytes: 64 * 1024 } })
    try {
      const parent = await deployedThread(s)
      const before = await threadsOf(s, 'alice')
      const at = { messageId: parent.userMessageId }
      const refused = await postFork(s, parent.threadId, { at, edit: { ...at, content: 'x'.repeat(64 * 1024) } })
      expect({ status: refused.status, code: refused.error?.code }).toEqual({ status: 413, code: 'THREAD_TOO_LARGE' })
      expect(await threadsOf(s, 'alice')).toBe(before)
      const fits = await postFork(s, parent.threadId, { at, edit: { ...at, content: 'deploy v9 to staging' } })
      expect(fits.status).toBe(201)
    } finally {
      await s.dispose()
    }
  })

  it('20 concurrent forks: 20 threads, the parent unchanged', async () => {
    const s = await serve()
    const parent = await deployedThread(s)
    const before = await parentBytes(s, parent.threadId)
    const { body: snapshot } = await snapshotOf(s, parent.threadId)
    const at = { messageId: snapshot.messages[snapshot.messages.length - 1]!.id }
    const forks = await Promise.all(Array.from({ length: 20 }, () => postFork(s, parent.threadId, { at })))
    expect(forks.map((f) => f.status)).toEqual(Array.from({ length: 20 }, () => 201))
    expect(new Set(forks.map((f) => f.body.threadId)).size).toBe(20)
    const listed = (await (await s.request(`/threads/${parent.threadId}/forks`)).json()) as ThreadForkList
    expect(listed.items.map((f) => f.threadId).sort()).toEqual(forks.map((f) => f.body.threadId).sort())
    for (const f of forks) expect((await snapshotOf(s, f.body.threadId)).body.messages).toEqual(snapshot.messages)
    expect(await parentBytes(s, parent.threadId)).toEqual(before)
  })
})
