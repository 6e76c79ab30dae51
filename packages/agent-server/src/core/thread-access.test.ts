import { describe, expect, it } from 'vitest'
import type { ToolDefinition } from '../agent/tool.ts'
import { interruptsOf, newThreadId, resumeInput, runInput, userMessage } from '../test-utils/harness.ts'
import { serversPerTest } from '../test-utils/in-process.ts'
import type { InProcessServer } from '../test-utils/in-process.ts'
import { commandAgent } from '../test-utils/test-agents.ts'

/**
 * Issue 12 item 7 (docs/protocol.md#thread-ids): another principal's thread is indistinguishable from one that does
 * not exist in every answer, and naming it never creates, changes or reveals anything.
 */

const deploy: ToolDefinition = {
  name: 'deploy',
  description: 'deploy',
  parameters: { type: 'object' },
  approval: 'always',
  execute: () => ({ deployed: true }),
}
const server = serversPerTest({ agent: commandAgent([deploy]) })

/** Every thread route as `bob`, answered as status + body. */
async function probe(s: InProcessServer, threadId: string, interruptId: string): Promise<string[]> {
  const json = { 'Content-Type': 'application/json' }
  const answers: Response[] = [
    await s.request(`/threads/${threadId}`, { principal: 'bob' }),
    await s.request(`/threads/${threadId}/events`, { principal: 'bob' }),
    await s.request(`/threads/${threadId}/events?follow=1`, { principal: 'bob' }),
    await s.request(`/threads/${threadId}/runs/run_1`, { principal: 'bob' }),
    await s.request(`/threads/${threadId}/runs/run_1/cancel`, {
      principal: 'bob',
      method: 'POST',
      headers: json,
      body: '{}',
    }),
    await s.request(`/threads/${threadId}/decisions`, {
      principal: 'bob',
      method: 'POST',
      headers: json,
      body: JSON.stringify({
        runId: 'run_d',
        resume: [{ interruptId, status: 'resolved', payload: { approved: true } }],
      }),
    }),
    await s.request('/runs', {
      principal: 'bob',
      method: 'POST',
      headers: json,
      body: JSON.stringify(resumeInput(threadId, [{ interruptId, status: 'cancelled' }], { runId: 'run_r' })),
    }),
  ]
  return Promise.all(answers.map(async (r) => `${r.status} ${await r.text()}`))
}

describe("another principal's thread", () => {
  it('is answered exactly like a thread that does not exist, on every route', async () => {
    const s = await server()
    const threadId = newThreadId()
    const paused = await s.postRun(
      runInput(threadId, [userMessage(JSON.stringify({ toolCalls: [{ name: 'deploy', args: {} }] }))]),
    )
    const [interrupt] = interruptsOf(paused.events)
    const taken = await probe(s, threadId, interrupt!.id)
    const unknown = await probe(s, newThreadId(), interrupt!.id)
    expect(taken).toEqual(unknown)
    for (const answer of taken) expect(answer).toMatch(/^404 \{"error":\{"code":"THREAD_NOT_FOUND"/)
    // Neither list shows it.
    const threads = (await (await s.request('/threads', { principal: 'bob' })).json()) as { threads: unknown[] }
    expect(threads.threads).toEqual([])
  })

  it('cannot be taken over or changed by new input naming its id (no squatting of a used id)', async () => {
    const s = await server()
    const threadId = newThreadId()
    const first = await s.postRun(runInput(threadId, [userMessage('{"text":"mine"}')]))
    expect(first.status).toBe(200)
    const before = await s.store.getThread(threadId)
    const squat = await s.postRun(runInput(threadId, [userMessage('{"text":"now mine"}')]), { principal: 'bob' })
    expect(squat.status).toBe(404)
    expect(squat.error?.code).toBe('THREAD_NOT_FOUND')
    const after = await s.store.getThread(threadId)
    expect(after).toEqual(before)
    expect(after?.ownerId).toBe('alice')
    expect(await s.store.listMessages(threadId)).toHaveLength(2)
    // The owner keeps using it.
    expect((await s.postRun(runInput(threadId, [userMessage('{"text":"again"}')]))).status).toBe(200)
  })
})
