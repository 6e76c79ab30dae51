/**
 * A cancel that overtakes the admission of its run (docs/protocol.md#cancel): the client stops right
 * after sending ("approve deploy", then Stop) and cancels the runId it sent before the server has
 * admitted that run. The server keeps the cancel, and the run admitted afterwards under that runId
 * is cancelled before any tool starts. Real HTTP server on 127.0.0.1, real SQLite file.
 */
import { afterEach, describe, expect, it } from 'vitest'
import type { RunFinishedEvent } from '@interlude/protocol'
import type { ToolDefinition } from '../agent/tool.ts'
import type { TestServer } from '../test-utils/harness.ts'
import {
  authHeader,
  interruptsOf,
  newThreadId,
  postRun,
  resumeInput,
  runInput,
  startTestServer,
  userMessage,
} from '../test-utils/harness.ts'
import { commandAgent } from '../test-utils/test-agents.ts'

const servers: TestServer[] = []
afterEach(async () => {
  for (const s of servers.splice(0).reverse()) await s.dispose()
})

function deployAgent() {
  const seen = { deploys: 0 }
  const deploy: ToolDefinition = {
    name: 'deploy',
    description: 'deploy',
    parameters: { type: 'object' },
    approval: 'always',
    execute: () => ++seen.deploys,
  }
  return { agent: commandAgent([deploy]), seen }
}

async function serve(agent: ReturnType<typeof deployAgent>['agent']) {
  const s = await startTestServer({ agent })
  servers.push(s)
  return s
}

const cancel = (s: TestServer, threadId: string, runId: string, principal: 'alice' | 'bob' = 'alice') =>
  fetch(`${s.baseUrl}/threads/${threadId}/runs/${runId}/cancel`, {
    method: 'POST',
    headers: { ...authHeader(principal), 'Content-Type': 'application/json' },
    body: '{}',
  })

const deployCommand = () => userMessage(JSON.stringify({ toolCalls: [{ name: 'deploy', args: { env: 'prod' } }] }))

const outcomeOf = (events: readonly { type: string }[]) =>
  (events.find((e) => e.type === 'RUN_FINISHED') as RunFinishedEvent | undefined)?.outcome

async function pause(s: TestServer, threadId: string) {
  const paused = await postRun(s, runInput(threadId, [deployCommand()]))
  const [interrupt] = interruptsOf(paused.events)
  expect(interrupt?.toolCallId).toBeDefined()
  return interrupt!
}

describe('cancel before admission', () => {
  it('a resume admitted after its cancel is cancelled before the approved tool runs', async () => {
    const { agent, seen } = deployAgent()
    const s = await serve(agent)
    const threadId = newThreadId()
    const interrupt = await pause(s, threadId)
    const resume = resumeInput(threadId, [
      { interruptId: interrupt.id, status: 'resolved', payload: { approved: true } },
    ])

    // The cancel arrives first: the run does not exist yet.
    const early = await cancel(s, threadId, resume.runId)
    expect(early.status).toBe(404)
    expect(((await early.json()) as { error: { code: string } }).error.code).toBe('RUN_NOT_FOUND')

    const resumed = await postRun(s, resume)
    expect(resumed.status).toBe(200)
    expect(outcomeOf(resumed.events)).toEqual({ type: 'cancelled' })
    expect(seen.deploys).toBe(0)
    // The run is recorded as cancelled; the thread is usable again.
    const status = await cancel(s, threadId, resume.runId)
    expect(await status.json()).toEqual({ runId: resume.runId, status: 'cancelled' })
    const next = await postRun(s, runInput(threadId, [userMessage('{"text":"hello"}')]))
    expect(outcomeOf(next.events)).toEqual({ type: 'success' })
  })

  it('a cancel for a thread that does not exist yet cancels the run that creates it', async () => {
    const { agent, seen } = deployAgent()
    const s = await serve(agent)
    const threadId = newThreadId()
    const input = runInput(threadId, [userMessage('{"text":"hello"}')])
    const early = await cancel(s, threadId, input.runId)
    expect(early.status).toBe(404)
    const run = await postRun(s, input)
    expect(outcomeOf(run.events)).toEqual({ type: 'cancelled' })
    expect(seen.deploys).toBe(0)
  })

  it("another principal's early cancel is not kept: the owner's run goes on", async () => {
    const { agent, seen } = deployAgent()
    const s = await serve(agent)
    const threadId = newThreadId()
    const interrupt = await pause(s, threadId)
    const resume = resumeInput(threadId, [
      { interruptId: interrupt.id, status: 'resolved', payload: { approved: true } },
    ])
    const foreign = await cancel(s, threadId, resume.runId, 'bob')
    expect(foreign.status).toBe(404)
    expect(((await foreign.json()) as { error: { code: string } }).error.code).toBe('THREAD_NOT_FOUND')
    const resumed = await postRun(s, resume)
    expect(outcomeOf(resumed.events)).toEqual({ type: 'success' })
    expect(seen.deploys).toBe(1)
  })

  it('a cancel for a finished run is answered with its status and is not kept', async () => {
    const { agent, seen } = deployAgent()
    const s = await serve(agent)
    const threadId = newThreadId()
    const first = runInput(threadId, [userMessage('{"text":"hello"}')])
    await postRun(s, first)
    const late = await cancel(s, threadId, first.runId)
    expect(await late.json()).toEqual({ runId: first.runId, status: 'succeeded' })
    const interrupt = await pause(s, threadId)
    const resumed = await postRun(
      s,
      resumeInput(threadId, [{ interruptId: interrupt.id, status: 'resolved', payload: { approved: true } }]),
    )
    expect(outcomeOf(resumed.events)).toEqual({ type: 'success' })
    expect(seen.deploys).toBe(1)
  })
})
