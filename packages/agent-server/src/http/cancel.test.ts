import { afterEach, describe, expect, it } from 'vitest'
import { EventType } from '@interlude/protocol'
import type { ThreadSnapshot } from '@interlude/protocol'
import type { ToolDefinition } from '../agent/tool.ts'
import type { ModelProvider } from '../models/model.ts'
import type { TestServer } from '../test-utils/harness.ts'
import {
  authHeader,
  newThreadId,
  postRun,
  runInput,
  startTestServer,
  textOf,
  toolResults,
  types,
  userMessage,
} from '../test-utils/harness.ts'
import { commandAgent, gatedModel } from '../test-utils/test-agents.ts'
import { threadKey } from '../store/thread-key.ts'

const servers: TestServer[] = []
afterEach(async () => {
  for (const s of servers.splice(0).reverse()) await s.dispose()
})

async function serve(...args: Parameters<typeof startTestServer>) {
  const s = await startTestServer(...args)
  servers.push(s)
  return s
}

const cancel = (s: TestServer, threadId: string, runId: string) =>
  fetch(`${s.baseUrl}/threads/${threadId}/runs/${runId}/cancel`, {
    method: 'POST',
    headers: { ...authHeader('alice'), 'Content-Type': 'application/json' },
    body: '{}',
  })

const snapshot = async (s: TestServer, threadId: string) =>
  (await (await fetch(`${s.baseUrl}/threads/${threadId}`, { headers: authHeader('alice') })).json()) as ThreadSnapshot

async function until<T>(probe: () => T | Promise<T>, what: string, timeoutMs = 10_000): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (value) return value as NonNullable<T>
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 10))
  }
}

/** `slow` blocks until released (and records whether it saw an abort); `deploy` counts executions. */
function blockingTools() {
  let release!: () => void
  const gate = new Promise<void>((resolve) => (release = resolve))
  const seen = { slowStarted: false, slowAborted: false, deploys: 0 }
  const slow: ToolDefinition = {
    name: 'slow',
    description: 'slow',
    parameters: { type: 'object' },
    execute: async (_args, ctx) => {
      seen.slowStarted = true
      await gate
      seen.slowAborted = ctx.signal.aborted
      return 'slow finished'
    },
  }
  const deploy: ToolDefinition = {
    name: 'deploy',
    description: 'deploy',
    parameters: { type: 'object' },
    execute: () => ++seen.deploys,
  }
  return { tools: [slow, deploy], seen, release: () => release() }
}

describe('cancel', () => {
  it('stops before the next tool starts; the running tool is not torn down and its result is kept', async () => {
    const b = blockingTools()
    const s = await serve({ agent: commandAgent(b.tools) })
    const threadId = newThreadId()
    const input = runInput(threadId, [
      userMessage(
        JSON.stringify({
          toolCalls: [
            { name: 'slow', args: {} },
            { name: 'deploy', args: {} },
          ],
        }),
      ),
    ])
    const running = postRun(s, input)
    await until(() => b.seen.slowStarted, 'slow to start')
    const res = await cancel(s, threadId, input.runId)
    expect(res.status).toBe(202)
    expect(await res.json()).toEqual({ runId: input.runId, status: 'cancelling' })
    b.release()
    const { events } = await running
    expect(events[events.length - 1]).toEqual({
      type: EventType.RUN_FINISHED,
      threadId,
      runId: input.runId,
      outcome: { type: 'cancelled' },
    })
    const results = toolResults(events)
    expect(results[0]).toMatchObject({ content: 'slow finished' })
    expect(results[1]).toMatchObject({ content: { status: 'cancelled' } })
    expect(b.seen).toMatchObject({ deploys: 0, slowAborted: false })
    // The turn is closed consistently: every call has a result, the thread is idle and continues.
    const after = await snapshot(s, threadId)
    expect(after.status).toBe('idle')
    expect(after.messages.filter((m) => m.role === 'tool')).toHaveLength(2)
    const next = await postRun(s, runInput(threadId, [userMessage('{"text":"and now?"}')]))
    expect(textOf(next.events)).toBe('and now?')
    expect(b.seen.deploys).toBe(0)
  })

  it('cancel vs disconnect: the cancelled run stops, the disconnected run completes and is stored', async () => {
    const cancelled = gatedModel()
    const dropped = gatedModel()
    const s = await serve({
      agent: {
        model: {
          name: 'two',
          stream: (r) => ((r.messages[0] as { content: string }).content === 'a' ? cancelled : dropped).model.stream(r),
        },
      },
    })
    const a = runInput(newThreadId(), [userMessage('a')])
    const b = runInput(newThreadId(), [userMessage('b')])
    const aRes = postRun(s, a)
    const controller = new AbortController()
    const bResponse = await fetch(`${s.baseUrl}/runs`, {
      method: 'POST',
      headers: { ...authHeader('alice'), 'Content-Type': 'application/json' },
      body: JSON.stringify(b),
      signal: controller.signal,
    })
    await bResponse.body!.getReader().read()
    await Promise.all([cancelled.started, dropped.started])
    controller.abort()
    expect((await cancel(s, a.threadId, a.runId)).status).toBe(202)
    cancelled.release()
    dropped.release()
    await s.app.runs.idle()

    const aEvents = (await aRes).events
    expect(aEvents[aEvents.length - 1]).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: 'cancelled' } })
    expect(textOf(aEvents)).toBe('waiting ')
    expect(await s.store.getRun(threadKey('alice', a.threadId), a.runId)).toMatchObject({ status: 'cancelled' })

    const bEvents = (await postRun(s, b)).events // same runId: the stored events again
    expect(types(bEvents)).toEqual([
      EventType.RUN_STARTED,
      EventType.TEXT_MESSAGE_START,
      EventType.TEXT_MESSAGE_CONTENT,
      EventType.TEXT_MESSAGE_CONTENT,
      EventType.TEXT_MESSAGE_END,
      EventType.RUN_FINISHED,
    ])
    expect(bEvents[bEvents.length - 1]).toMatchObject({ outcome: { type: 'success' } })
    expect(textOf(bEvents)).toBe('waiting released')
    expect((await snapshot(s, b.threadId)).messages.map((m) => m.role)).toEqual(['user', 'assistant'])
  })

  it('a cancel received by another process sharing the store reaches the run; that process also tails it live', async () => {
    // Streams one token, then waits until the run's signal is aborted (as a real HTTP model request does).
    let markStarted!: () => void
    const started = new Promise<void>((resolve) => (markStarted = resolve))
    const model: ModelProvider = {
      name: 'until-aborted',
      async *stream(request) {
        yield { type: 'text', delta: 'waiting ' }
        markStarted()
        await new Promise((resolve) => request.signal.addEventListener('abort', resolve, { once: true }))
        yield { type: 'text', delta: 'never sent' }
      },
    }
    const agent = { model }
    const a = await serve({ agent, exclusive: false, runLeaseMs: 600 })
    const b = await serve({ agent, exclusive: false, runLeaseMs: 600, dbPath: a.dbPath, pollMs: 25 })
    const threadId = newThreadId()
    const input = runInput(threadId, [userMessage('hi')])
    const running = postRun(a, input)
    await started
    // B tails A's run: frames arrive through the log poll.
    const tail = fetch(`${b.baseUrl}/threads/${threadId}/events`, { headers: authHeader('alice') }).then((r) =>
      r.text(),
    )
    const res = await cancel(b, threadId, input.runId)
    expect(res.status).toBe(202)
    // A learns about the flag at its next lease renewal; the run stops before the next model chunk.
    const { events, raw } = await running
    expect(events[events.length - 1]).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: 'cancelled' } })
    expect(textOf(events)).toBe('waiting ')
    expect(await tail).toBe(raw)
  })
})
