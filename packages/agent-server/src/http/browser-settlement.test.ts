/**
 * Browser calls pending on a thread are settled by exactly one of the owner's clients
 * (docs/protocol.md#browser-tools): the first result set is admitted, a later one for the same
 * calls is refused with `409 TOOL_RESULTS_ALREADY_SUBMITTED` and changes nothing. Real HTTP
 * server on 127.0.0.1, real SQLite file.
 */
import { afterEach, describe, expect, it } from 'vitest'
import type { Message, ThreadSnapshot } from '@interlude/protocol'
import type { TestServer } from '../test-utils/harness.ts'
import {
  authHeader,
  newThreadId,
  postRun,
  runInput,
  startTestServer,
  textOf,
  userMessage,
} from '../test-utils/harness.ts'
import { commandAgent } from '../test-utils/test-agents.ts'

const servers: TestServer[] = []
afterEach(async () => {
  for (const s of servers.splice(0).reverse()) await s.dispose()
})

const tools = [{ name: 'pick_color', description: 'Ask the browser', parameters: { type: 'object' } }]
const command = (value: unknown) => userMessage(JSON.stringify(value))
const answer = (id: string, toolCallId: string, content: string): Message => ({ id, role: 'tool', toolCallId, content })

async function pendingBrowserCall(s: TestServer, threadId: string): Promise<string> {
  const first = await postRun(
    s,
    runInput(threadId, [command({ toolCalls: [{ name: 'pick_color', args: {} }] })], { tools }),
  )
  const finished = first.events[first.events.length - 1] as { outcome: { pendingToolCallIds: string[] } }
  const [id] = finished.outcome.pendingToolCallIds
  expect(id).toBeDefined()
  return id!
}

const snapshot = async (s: TestServer, threadId: string) =>
  (await (await fetch(`${s.baseUrl}/threads/${threadId}`, { headers: authHeader('alice') })).json()) as ThreadSnapshot

describe('settling browser calls once', () => {
  it('two clients answer the same pending call: the first continues the turn, the second gets 409 and changes nothing', async () => {
    const s = await startTestServer({ agent: commandAgent([]) })
    servers.push(s)
    const threadId = newThreadId()
    const callId = await pendingBrowserCall(s, threadId)

    const first = await postRun(s, runInput(threadId, [answer('tab-a', callId, 'blue')], { tools }))
    expect(first.status).toBe(200)
    expect(textOf(first.events)).toBe('done: blue')
    const before = await snapshot(s, threadId)

    const second = await postRun(s, runInput(threadId, [answer('tab-b', callId, 'red')], { tools }))
    expect(second.status).toBe(409)
    expect(second.error).toMatchObject({
      code: 'TOOL_RESULTS_ALREADY_SUBMITTED',
      details: { toolCallIds: [callId] },
    })
    const after = await snapshot(s, threadId)
    expect(after.revision).toBe(before.revision)
    expect(after.messages).toEqual(before.messages)

    // The winner re-sending its own history (same message ids) is not a second result set.
    const again = await postRun(
      s,
      runInput(threadId, [...(after.messages as Message[]), userMessage('{"text":"thanks"}')], { tools }),
    )
    expect(again.status).toBe(200)
  })

  it('a result that arrives after the next message cancelled the call is refused', async () => {
    const s = await startTestServer({ agent: commandAgent([]) })
    servers.push(s)
    const threadId = newThreadId()
    const callId = await pendingBrowserCall(s, threadId)
    const moved = await postRun(s, runInput(threadId, [userMessage('{"text":"never mind"}')], { tools }))
    expect(moved.status).toBe(200)
    const late = await postRun(s, runInput(threadId, [answer('late', callId, 'blue')], { tools }))
    expect(late.status).toBe(409)
    expect(late.error?.code).toBe('TOOL_RESULTS_ALREADY_SUBMITTED')
  })
})
