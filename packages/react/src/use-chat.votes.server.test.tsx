// @vitest-environment jsdom
/**
 * Votes seen live by the requester (docs/approvals.md#organisation-policies): the demo agent with
 * `productionQuorum: 2` on the real agent server (127.0.0.1, SQLite in a temp dir), hooks inside <StrictMode>. eng
 * asks for a production deploy; mgr and bob vote through the decisions API; the open chat shows each vote the moment
 * it is cast and streams the continuation once the second one settles the batch.
 */
import type { RunningServer } from '@interlude/agent-server'
import type { ResumeEntry } from '@interlude/protocol'
import { waitFor } from '@testing-library/react'
import { describe, expect, it } from 'vitest'
import { answers, count, mount, newThread, pause, serve, textOf, TOKENS } from './test-utils/approvals-kit.tsx'

const BOB = 'bob-token'

async function vote(server: RunningServer, threadId: string, token: string, resume: ResumeEntry[], runId: string) {
  const res = await fetch(`${server.baseUrl}/threads/${threadId}/decisions?owner=eng`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ runId, resume }),
  })
  return { status: res.status, body: (await res.json()) as { pending?: unknown[] } }
}

describe('votes under a quorum, live in useChat', () => {
  it('each vote appears in decisions as it is cast; the batch stays until the second; then the turn goes on', async () => {
    const server = await serve({ tokens: { ...TOKENS, bob: BOB }, approvers: ['mgr', 'bob'], productionQuorum: 2 })
    const threadId = newThread()
    const { result } = mount(server, { threadId })
    const batch = await pause(result, 'deploy v2.1 to production')
    expect(result.current.decisions).toEqual([])

    const first = await vote(server, threadId, TOKENS.mgr, answers(batch.interrupts, true), `vote-mgr-${threadId}`)
    expect(first.status).toBe(202)
    expect(first.body.pending?.length).toBeGreaterThan(0)
    // Live: the vote reaches the open chat through the thread's log, and the question is still open here.
    await waitFor(
      () => expect(result.current.decisions).toMatchObject([{ decidedBy: 'mgr', vote: true, via: 'api' }]),
      { timeout: 10_000 },
    )
    expect(result.current.pendingInterrupts?.interrupts.map((i) => i.id)).toEqual(batch.interrupts.map((i) => i.id))
    expect(result.current.error).toBeUndefined()
    expect(count(textOf(result.current.messages), 'deployed v2.1')).toBe(0)

    const second = await vote(server, threadId, BOB, answers(batch.interrupts, true), `vote-bob-${threadId}`)
    expect(second.status).toBe(202)
    expect(second.body.pending).toBeUndefined()
    await waitFor(() => expect(result.current.pendingInterrupts).toBeUndefined(), { timeout: 10_000 })
    await waitFor(() => expect(result.current.isLoading).toBe(false), { timeout: 10_000 })
    expect(result.current.decisions.map((d) => d.decidedBy)).toEqual(['mgr', 'bob'])
    expect(result.current.error).toBeUndefined()
    expect(count(textOf(result.current.messages), 'deployed v2.1')).toBe(1)
  })
})
