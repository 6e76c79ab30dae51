import { afterEach, describe, expect, it } from 'vitest'
import { RECORDED_SERVERS, replayFetch, sseOf } from '../test-utils/recorded-streams.ts'
import { interruptTitle } from '../forms/interrupt-title.ts'
import { ChatRuntime } from './chat-runtime.ts'

/**
 * Streams of foreign AG-UI servers (LangGraph through `@ag-ui/langgraph` in each interrupt
 * configuration, the CopilotKit runtime in front of it, Mastra through `@ag-ui/mastra`) replayed
 * through the real HTTP transport and `ChatRuntime`: pause → `pendingInterrupts` → resume → finished.
 */

const runtimes: ChatRuntime[] = []
afterEach(() => {
  for (const rt of runtimes.splice(0)) rt.dispose()
})

function runtimeFor(fetchImpl: typeof fetch) {
  let n = 0
  const rt = new ChatRuntime({
    runUrl: 'http://agent.test/awp',
    fetch: fetchImpl,
    threadId: 'thread-1',
    generateId: () => `run-${++n}`,
    follow: false,
    throttleMs: 0,
  })
  runtimes.push(rt)
  return rt
}

describe.each(RECORDED_SERVERS)('a recorded $name stream through ChatRuntime', (server) => {
  async function paused() {
    const replay = replayFetch(server)
    const rt = runtimeFor(replay.fetch)
    await rt.sendMessage('deploy v2.1')
    const snapshot = rt.getSnapshot()
    expect(snapshot.error).toBeUndefined()
    const batch = snapshot.pendingInterrupts!
    const id = server.interruptId(String(replay.bodies[0]?.runId))
    expect(batch.interrupts.map((i) => i.id)).toEqual([id])
    return { rt, replay, batch, id, interrupt: batch.interrupts[0]! }
  }

  it('pauses with the interrupt the bridge expects, resumes with resume[] and finishes', async () => {
    const { rt, replay, batch, id } = await paused()
    await rt.resume({
      batchId: batch.id,
      entries: [{ interruptId: id, status: 'resolved', payload: { approved: true } }],
    })
    const done = rt.getSnapshot()
    expect(done.error).toBeUndefined()
    expect(done.pendingInterrupts).toBeUndefined()
    expect(done.isLoading).toBe(false)
    expect(done.messages.at(-1)).toMatchObject({ role: 'assistant' })
    // The standard 1.0 resume: the interrupt id from the stream, no forwardedProps.command.
    const body = replay.bodies[1]!
    expect(body.resume).toEqual([{ interruptId: id, status: 'resolved', payload: server.approved }])
    expect((body.forwardedProps as Record<string, unknown> | undefined)?.command).toBeUndefined()
  })

  it('presents the question as the title (not the raw reason) with an approval to answer', async () => {
    const { rt, interrupt } = await paused()
    expect(interruptTitle(interrupt, rt.getSnapshot().messages)).toBe(server.title)
    expect(interrupt.reason).toMatch(/^(langgraph:interrupt|mastra:tool_suspend)$/)
    const schema = interrupt.responseSchema as { properties?: Record<string, { type?: string }> }
    expect(schema.properties?.approved?.type).toBe('boolean')
  })

  it('sends a cancel in a form the server can take', async () => {
    const { rt, replay, batch, id } = await paused()
    await rt.resume({ batchId: batch.id, entries: [{ interruptId: id, status: 'cancelled' }] })
    expect(rt.getSnapshot().error).toBeUndefined()
    expect(replay.bodies[1]!.resume).toEqual([{ interruptId: id, ...server.cancelled }])
  })
})

describe('foreign streams: what stays strict', () => {
  /** A server answering every POST with these events (given the request's run id). */
  const serving =
    (events: (runId: string) => Record<string, unknown>[]): typeof fetch =>
    async (_url, init) => {
      const { runId } = JSON.parse(String(init?.body)) as { runId: string }
      return new Response(sseOf(events(runId)), { status: 200, headers: { 'Content-Type': 'text/event-stream' } })
    }

  it('a RUN_FINISHED of another thread is still a protocol error', async () => {
    const rt = runtimeFor(
      serving((runId) => [
        { type: 'RUN_STARTED', threadId: 'thread-1', runId },
        { type: 'RUN_FINISHED', threadId: 'thread-2', runId: 'their-run' },
      ]),
    )
    await rt.sendMessage('hi')
    expect(rt.getSnapshot().error).toMatchObject({
      code: 'PROTOCOL_ERROR',
      message: 'RUN_FINISHED does not match the run.',
    })
  })

  it('an ordinary CUSTOM event is not a pause', async () => {
    const rt = runtimeFor(
      serving((runId) => [
        { type: 'RUN_STARTED', threadId: 'thread-1', runId },
        { type: 'CUSTOM', name: 'PredictState', value: [{ tool: 'deploy' }] },
        { type: 'CUSTOM', name: 'progress', value: JSON.stringify({ type: 'mastra_suspend', toolCallId: 'x' }) },
        { type: 'CUSTOM', name: 'on_interrupt', value: { not: 'a pause' } },
        { type: 'RUN_FINISHED', threadId: 'thread-1', runId: 'their-run' },
      ]),
    )
    await rt.sendMessage('hi')
    expect(rt.getSnapshot()).toMatchObject({ error: undefined, pendingInterrupts: undefined, isLoading: false })
  })
})
