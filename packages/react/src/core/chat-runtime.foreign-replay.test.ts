import { afterEach, describe, expect, it } from 'vitest'
import { RECORDED_SERVERS, replayFetch, sseOf } from '../test-utils/recorded-streams.ts'
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
  it('pauses with the interrupt the bridge expects, resumes with resume[] and finishes', async () => {
    const replay = replayFetch(server)
    const rt = runtimeFor(replay.fetch)
    await rt.sendMessage('deploy v2.1')
    const paused = rt.getSnapshot()
    expect(paused.error).toBeUndefined()
    const batch = paused.pendingInterrupts
    const pauseRunId = String(replay.bodies[0]?.runId)
    expect(batch?.interrupts.map((i) => i.id)).toEqual([server.interruptId(pauseRunId)])

    await rt.resume({
      batchId: batch!.id,
      entries: [{ interruptId: batch!.interrupts[0]!.id, status: 'resolved', payload: { approved: true } }],
    })
    const done = rt.getSnapshot()
    expect(done.error).toBeUndefined()
    expect(done.pendingInterrupts).toBeUndefined()
    expect(done.isLoading).toBe(false)
    expect(done.messages.at(-1)).toMatchObject({ role: 'assistant' })
    // The standard 1.0 resume: the interrupt id from the stream, no forwardedProps.command.
    const body = replay.bodies[1]!
    expect(body.resume).toEqual([
      { interruptId: server.interruptId(pauseRunId), status: 'resolved', payload: { approved: true } },
    ])
    expect((body.forwardedProps as Record<string, unknown> | undefined)?.command).toBeUndefined()
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
