/**
 * `fork` and `forks` against the real agent server on 127.0.0.1 (SQLite, the scripted release assistant,
 * docs/time-travel.md): a script forks a paused thread at its batch, answers differently there, and the parent keeps
 * its own outcome. Nothing is mocked.
 */
import { releaseAssistant } from '@interlude/agent-server/demo'
import type { ReleaseState } from '@interlude/agent-server/demo'
import { interruptsOf, newThreadId, postRun, runInput, startTestServer, TOKENS } from '@interlude/agent-server/testing'
import type { TestServer } from '@interlude/agent-server/testing'
import { userMessage } from '@interlude/agent-server/testing'
import { InterludeError } from '@interlude/protocol'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { approveAll, denyAll } from './decision-entries.ts'
import { createDecisionsClient } from './decisions-client.ts'

let server: TestServer
beforeAll(async () => {
  server = await startTestServer({ agent: releaseAssistant() })
})
afterAll(async () => {
  await server.dispose()
})

const as = (principal: keyof typeof TOKENS) =>
  createDecisionsClient({ baseUrl: server.baseUrl, token: TOKENS[principal] })

describe('fork from a script', () => {
  it('forks at a batch, denies there; the parent approves; forks lists the child; a stranger gets 404', async () => {
    const alice = as('alice')
    const threadId = newThreadId()
    const user = userMessage('deploy v5 to staging')
    const first = await postRun(server, runInput(threadId, [user]))
    const batchId = (first.events[0] as { runId: string }).runId
    expect(interruptsOf(first.events)).toHaveLength(2)

    const fork = await alice.fork(threadId, { at: { batchId }, threadId: `${threadId}-what-if` })
    expect(fork).toEqual({ threadId: `${threadId}-what-if`, parent: { threadId, at: { batchId } } })
    const paused = await alice.snapshot(fork.threadId)
    expect(paused).toMatchObject({ status: 'interrupted', batchId, parent: fork.parent })
    const denied = await alice.decide(fork.threadId, { resume: denyAll({ interrupts: paused.interrupts ?? [] }) })
    await alice.waitForRun(fork.threadId, denied.runId)
    const approved = await alice.decide(threadId, { resume: approveAll({ interrupts: interruptsOf(first.events) }) })
    await alice.waitForRun(threadId, approved.runId)

    const deployments = async (id: string) => ((await alice.snapshot(id)).state as ReleaseState).deployments
    expect(await deployments(fork.threadId)).toEqual([])
    expect(await deployments(threadId)).toMatchObject([{ version: 'v5', environment: 'staging' }])
    expect(await alice.forks(threadId)).toEqual([
      { threadId: fork.threadId, at: { batchId }, createdAt: expect.any(String) as string },
    ])

    const edited = await alice.fork(threadId, {
      at: { messageId: user.id },
      edit: { messageId: user.id, content: 'deploy v6 to staging' },
    })
    expect((await alice.snapshot(edited.threadId)).messages).toEqual([{ ...user, content: 'deploy v6 to staging' }])

    const stranger = await as('bob')
      .fork(threadId, { at: { batchId } })
      .catch((error: unknown) => error)
    expect(InterludeError.isInstance(stranger) && stranger.code).toBe('THREAD_NOT_FOUND')
    expect((await alice.forks(threadId)).map((f) => f.threadId).sort()).toEqual([fork.threadId, edited.threadId].sort())
  })
})
