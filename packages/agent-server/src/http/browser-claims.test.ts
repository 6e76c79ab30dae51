/**
 * Browser work claimed before it runs (docs/protocol.md#browser-tool-claims): a tab claims a browser call before its
 * handler runs; one claim wins, a result set from another claim (or naming a claim the call does not have) is
 * refused with a typed error and changes nothing; a claimed call overtaken by a new message is left `unknown`.
 */
import { afterEach, describe, expect, it } from 'vitest'
import type { RunAgentInput } from '@interlude/protocol'
import { newThreadId, runInput, textOf, userMessage } from '../test-utils/harness.ts'
import type { InProcessServer } from '../test-utils/in-process.ts'
import { startInProcess } from '../test-utils/in-process.ts'
import { commandAgent } from '../test-utils/test-agents.ts'
import { threadKey } from '../store/thread-key.ts'

let server: InProcessServer | undefined
afterEach(async () => {
  await server?.dispose()
  server = undefined
})

const tools = [{ name: 'pick_color', description: 'Ask the browser', parameters: { type: 'object' } }]
const command = (value: unknown) => userMessage(JSON.stringify(value))

async function pendingBrowserCall(): Promise<{ s: InProcessServer; threadId: string; toolCallId: string }> {
  server = await startInProcess({ agent: commandAgent([]) })
  const threadId = newThreadId()
  const first = await server.postRun(
    runInput(threadId, [command({ toolCalls: [{ name: 'pick_color', args: {} }] })], { tools }),
  )
  const finished = first.events.at(-1) as { outcome: { pendingToolCallIds: string[] } }
  return { s: server, threadId, toolCallId: finished.outcome.pendingToolCallIds[0]! }
}

const claim = (
  s: InProcessServer,
  threadId: string,
  toolCallId: string,
  claimId: string,
  principal: 'alice' | 'bob' = 'alice',
) =>
  s.request(`/threads/${threadId}/tool-calls/${toolCallId}/claim`, {
    method: 'POST',
    principal,
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ claimId }),
  })

const resultSet = (threadId: string, toolCallId: string, content: string, claimId?: string): RunAgentInput =>
  runInput(threadId, [{ id: `tm-${content}`, role: 'tool', toolCallId, content }], {
    tools,
    ...(claimId ? { forwardedProps: { interlude: { claimId } } } : {}),
  })

describe('browser tool claims', () => {
  it('one claim wins; the other tab sees it taken and its results are refused; the winner’s result continues', async () => {
    const { s, threadId, toolCallId } = await pendingBrowserCall()
    const claims = await Promise.all(['tab-a', 'tab-b', 'tab-c'].map((id) => claim(s, threadId, toolCallId, id)))
    const bodies = (await Promise.all(claims.map((r) => r.json()))) as { claimId?: string; error?: { code: string } }[]
    const won = bodies.filter((b) => b.claimId !== undefined)
    expect(won).toHaveLength(1)
    const winner = won[0]!.claimId!
    expect(claims.filter((r) => r.status === 409)).toHaveLength(2)
    for (const b of bodies) if (b.error) expect(b.error.code).toBe('TOOL_CALL_CLAIMED')
    // The same claim again: the same answer.
    expect((await claim(s, threadId, toolCallId, winner)).status).toBe(200)

    const key = threadKey('alice', threadId)
    const revision = (await s.store.getThread(key))!.revision
    const loser = ['tab-a', 'tab-b', 'tab-c'].find((id) => id !== winner)!
    const foreign = await s.postRun(resultSet(threadId, toolCallId, 'red', loser))
    expect(foreign.status).toBe(409)
    expect(foreign.error).toMatchObject({ code: 'TOOL_CALL_CLAIMED', details: { toolCallIds: [toolCallId] } })
    const anonymous = await s.postRun(resultSet(threadId, toolCallId, 'green'))
    expect(anonymous.error?.code).toBe('TOOL_CALL_CLAIMED')
    expect((await s.store.getThread(key))!.revision).toBe(revision)

    const ok = await s.postRun(resultSet(threadId, toolCallId, 'blue', winner))
    expect(textOf(ok.events)).toBe('done: blue')
    const after = await claim(s, threadId, toolCallId, loser)
    expect(after.status).toBe(409)
    expect(((await after.json()) as { error: { code: string } }).error.code).toBe('TOOL_RESULTS_ALREADY_SUBMITTED')
  })

  it('a result set naming a claim the call does not have is refused; one naming none is a plain AG-UI client’s', async () => {
    const { s, threadId, toolCallId } = await pendingBrowserCall()
    const unclaimed = await s.postRun(resultSet(threadId, toolCallId, 'red', 'tab-a'))
    expect(unclaimed.status).toBe(409)
    expect(unclaimed.error?.code).toBe('TOOL_CALL_NOT_CLAIMED')
    const plain = await s.postRun(resultSet(threadId, toolCallId, 'blue'))
    expect(textOf(plain.events)).toBe('done: blue')
  })

  it('a claimed call overtaken by a new message is unknown (it may have run); an unclaimed one is cancelled', async () => {
    const { s, threadId, toolCallId } = await pendingBrowserCall()
    expect((await claim(s, threadId, toolCallId, 'tab-a')).status).toBe(200)
    await s.postRun(runInput(threadId, [userMessage('never mind')], { tools }))
    const key = threadKey('alice', threadId)
    expect(await s.store.getToolCall(key, toolCallId)).toMatchObject({ status: 'unknown' })

    const second = await s.postRun(
      runInput(threadId, [command({ toolCalls: [{ name: 'pick_color', args: {} }] })], { tools }),
    )
    const next = (second.events.at(-1) as { outcome: { pendingToolCallIds: string[] } }).outcome.pendingToolCallIds[0]!
    await s.postRun(runInput(threadId, [userMessage('again, never mind')], { tools }))
    expect(await s.store.getToolCall(key, next)).toMatchObject({ status: 'cancelled' })
  })

  it('refuses a stranger (404), a missing or server call (422) and a bad body (400)', async () => {
    const { s, threadId, toolCallId } = await pendingBrowserCall()
    expect((await claim(s, threadId, toolCallId, 'tab-b', 'bob')).status).toBe(404)
    expect((await claim(s, threadId, 'call_nope', 'tab-a')).status).toBe(422)
    const bad = await s.request(`/threads/${threadId}/tool-calls/${toolCallId}/claim`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ claimId: 7 }),
    })
    expect(bad.status).toBe(400)
    expect((await claim(s, threadId, toolCallId, 'tab-a')).status).toBe(200)
  })
})
