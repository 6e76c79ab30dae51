import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { EventType } from '@interlude/protocol'
import { releaseAssistant } from '../demo/release-assistant.ts'
import type { ReleaseState } from '../demo/release-assistant.ts'
import type { TestServer } from '../test-utils/harness.ts'
import {
  interruptsOf,
  lastState,
  newThreadId,
  postRun,
  resumeInput,
  runInput,
  startTestServer,
  textOf,
  toolResults,
  types,
  userMessage,
} from '../test-utils/harness.ts'
import type { FakeOpenAI } from '../test-utils/fake-openai.ts'
import { chunk, startFakeOpenAI, streamOf } from '../test-utils/fake-openai.ts'
import { openaiModel } from './openai.ts'

let fake: FakeOpenAI
let queue: FakeOpenAI['queue']
let requests: FakeOpenAI['requests']
let baseURL: string

beforeAll(async () => {
  fake = await startFakeOpenAI()
  ;({ queue, requests, baseURL } = fake)
})
afterAll(async () => {
  await fake.close()
})

let server: TestServer
afterEach(async () => {
  await server?.dispose()
  fake.reset()
})

async function serve(maxRetries = 0): Promise<TestServer> {
  server = await startTestServer({
    agent: releaseAssistant({ model: openaiModel({ apiKey: 'test-key', baseURL, model: 'fake-model', maxRetries }) }),
  })
  return server
}

describe('OpenAI provider (real openai client, local compatible server)', () => {
  it('streams text and tool-call argument fragments, pauses, and sends the tool results back on resume', async () => {
    const s = await serve()
    queue.push(
      streamOf([
        chunk({ role: 'assistant', content: 'Plan: ' }),
        chunk({ content: 'publish and deploy.' }),
        chunk({
          tool_calls: [
            { index: 0, id: 'call_pub', type: 'function', function: { name: 'publish_release', arguments: '' } },
          ],
        }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: '{"vers' } }] }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: 'ion":"v2.1"}' } }] }),
        chunk({
          tool_calls: [
            {
              index: 1,
              id: 'call_dep',
              type: 'function',
              function: { name: 'deploy', arguments: '{"version":"v2.1",' },
            },
          ],
        }),
        chunk({ tool_calls: [{ index: 1, function: { arguments: '"environment":"production"}' } }] }),
        chunk({}, 'tool_calls'),
      ]),
    )
    const threadId = newThreadId()
    const first = await postRun(s, runInput(threadId, [userMessage('deploy v2.1 to production')]))
    expect(textOf(first.events)).toBe('Plan: publish and deploy.')
    const args = first.events
      .filter((e) => e.type === EventType.TOOL_CALL_ARGS)
      .map((e) => (e as { delta: string }).delta)
    expect(args).toEqual(['{"vers', 'ion":"v2.1"}', '{"version":"v2.1",', '"environment":"production"}'])
    const [publish, deploy] = interruptsOf(first.events)
    expect(publish).toMatchObject({ toolCallId: 'call_pub', message: 'Publish release v2.1?' })
    expect(deploy).toMatchObject({ toolCallId: 'call_dep', message: 'Deploy v2.1 to production?' })

    const sent = requests[0]!
    expect(sent).toMatchObject({ model: 'fake-model', stream: true })
    expect((sent.tools as { function: { name: string } }[]).map((t) => t.function.name)).toEqual([
      'publish_release',
      'deploy',
      'ask_user',
      'schedule_maintenance',
      'rollback',
      'auditor',
      'notify_oncall',
      'check_changelog',
      'check_status',
    ])
    expect((sent.messages as { role: string }[]).map((m) => m.role)).toEqual(['system', 'user'])

    queue.push(streamOf([chunk({ role: 'assistant', content: 'Both done.' }), chunk({}, 'stop')]))
    const resumed = await postRun(
      s,
      resumeInput(threadId, [
        { interruptId: publish!.id, status: 'resolved', payload: { approved: true } },
        { interruptId: deploy!.id, status: 'resolved', payload: { approved: false, reason: 'not today' } },
      ]),
    )
    expect(textOf(resumed.events)).toBe('Both done.')
    expect((lastState(resumed.events) as ReleaseState).releases).toHaveLength(1)
    const second = requests[1]!.messages as {
      role: string
      tool_call_id?: string
      tool_calls?: unknown[]
      content: unknown
    }[]
    expect(second.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'tool'])
    expect(second[2]!.tool_calls).toEqual([
      { id: 'call_pub', type: 'function', function: { name: 'publish_release', arguments: '{"version":"v2.1"}' } },
      {
        id: 'call_dep',
        type: 'function',
        function: { name: 'deploy', arguments: '{"version":"v2.1","environment":"production"}' },
      },
    ])
    expect(second[4]).toEqual({
      role: 'tool',
      tool_call_id: 'call_dep',
      content: '{"status":"denied","reason":"not today"}',
    })
    expect(toolResults(resumed.events).map((r) => r.toolCallId)).toEqual(['call_pub', 'call_dep'])
  })

  // Gemini's OpenAI-compatible endpoint and several proxies: no index, or index 0 for every call.
  const parallelShapes: Record<string, (call: Record<string, unknown>) => Record<string, unknown>> = {
    'without index': (call) => call,
    'with index 0 for every call': (call) => ({ index: 0, ...call }),
  }
  for (const [shape, withIndex] of Object.entries(parallelShapes)) {
    it(`parallel tool calls ${shape} and distinct ids are two calls`, async () => {
      const s = await serve()
      const frames = [
        { id: 'call_pub', type: 'function', function: { name: 'publish_release', arguments: '' } },
        { function: { arguments: '{"vers' } },
        { function: { arguments: 'ion":"v2.1"}' } },
        { id: 'call_dep', type: 'function', function: { name: 'deploy', arguments: '{"version":"v2.1",' } },
        { function: { arguments: '"environment":"production"}' } },
      ].map((call) => chunk({ tool_calls: [withIndex(call)] }))
      queue.push(streamOf([chunk({ role: 'assistant', content: null }), ...frames, chunk({}, 'tool_calls')]))
      const threadId = newThreadId()
      const r = await postRun(s, runInput(threadId, [userMessage('deploy v2.1 to production')]))
      const starts = r.events.filter((e) => e.type === EventType.TOOL_CALL_START)
      expect(starts).toMatchObject([
        { toolCallId: 'call_pub', toolCallName: 'publish_release' },
        { toolCallId: 'call_dep', toolCallName: 'deploy' },
      ])
      const interrupts = interruptsOf(r.events)
      expect(interrupts).toHaveLength(2)
      expect(interrupts[0]).toMatchObject({ toolCallId: 'call_pub', message: 'Publish release v2.1?' })
      expect(interrupts[1]).toMatchObject({ toolCallId: 'call_dep', message: 'Deploy v2.1 to production?' })

      // Both calls are stored with their own arguments and are answered on resume.
      queue.push(streamOf([chunk({ role: 'assistant', content: 'Done.' }), chunk({}, 'stop')]))
      await postRun(
        s,
        resumeInput(
          threadId,
          interrupts.map((i) => ({ interruptId: i.id, status: 'resolved', payload: { approved: false } })),
        ),
      )
      const sent = requests[1]!.messages as { role: string; tool_calls?: unknown[]; tool_call_id?: string }[]
      expect(sent.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'tool'])
      expect(sent[2]!.tool_calls).toEqual([
        { id: 'call_pub', type: 'function', function: { name: 'publish_release', arguments: '{"version":"v2.1"}' } },
        {
          id: 'call_dep',
          type: 'function',
          function: { name: 'deploy', arguments: '{"version":"v2.1","environment":"production"}' },
        },
      ])
      expect(sent.slice(3).map((m) => m.tool_call_id)).toEqual(['call_pub', 'call_dep'])
    })
  }

  it('an HTTP error from the model is RUN_ERROR MODEL_ERROR with typed details and no upstream text', async () => {
    const s = await serve()
    queue.push((_req, res) => {
      res.writeHead(500, { 'Content-Type': 'application/json' })
      res.end(JSON.stringify({ error: { message: 'internal secret: org-42 quota', type: 'server_error' } }))
    })
    const threadId = newThreadId()
    const r = await postRun(s, runInput(threadId, [userMessage('hello')]))
    expect(types(r.events)).toEqual([EventType.RUN_STARTED, EventType.RUN_ERROR])
    expect(r.events[1]).toEqual({
      type: EventType.RUN_ERROR,
      code: 'MODEL_ERROR',
      message: 'The model provider is unavailable; try again later.',
      details: { kind: 'unavailable', retryable: true, status: 500 },
    })
    expect(r.raw).not.toContain('org-42')
    // The thread is usable afterwards.
    queue.push(streamOf([chunk({ content: 'hi' }), chunk({}, 'stop')]))
    expect(textOf((await postRun(s, runInput(threadId, [userMessage('again')]))).events)).toBe('hi')
  })

  it('retries a 503 when maxRetries allows it', async () => {
    const s = await serve(1)
    queue.push((_req, res) =>
      res
        .writeHead(503, { 'Content-Type': 'application/json', 'retry-after-ms': '1' })
        .end('{"error":{"message":"busy"}}'),
    )
    queue.push(streamOf([chunk({ content: 'after retry' }), chunk({}, 'stop')]))
    const r = await postRun(s, runInput(newThreadId(), [userMessage('hello')]))
    expect(textOf(r.events)).toBe('after retry')
    expect(requests).toHaveLength(2)
  })

  it('a dropped stream is RUN_ERROR MODEL_ERROR; the partial text is closed and not stored as history', async () => {
    const s = await serve()
    queue.push(streamOf([chunk({ role: 'assistant', content: 'Half an ans' })], { drop: true }))
    const threadId = newThreadId()
    const r = await postRun(s, runInput(threadId, [userMessage('hello')]))
    const t = types(r.events)
    expect(t[0]).toBe(EventType.RUN_STARTED)
    expect(t[t.length - 1]).toBe(EventType.RUN_ERROR)
    expect(r.events[r.events.length - 1]).toMatchObject({ code: 'MODEL_ERROR' })
    queue.push(streamOf([chunk({ content: 'ok' }), chunk({}, 'stop')]))
    await postRun(s, runInput(threadId, [userMessage('again')]))
    expect((requests[1]!.messages as { role: string }[]).map((m) => m.role)).toEqual(['system', 'user', 'user'])
  })

  /** Every START has its END before the terminal event. */
  function expectClosed(events: readonly { type: string; toolCallId?: string; messageId?: string }[]): void {
    const open = new Set<string>()
    for (const e of events.slice(0, -1)) {
      if (e.type === EventType.TEXT_MESSAGE_START) open.add(`text:${e.messageId}`)
      if (e.type === EventType.TEXT_MESSAGE_END) expect(open.delete(`text:${e.messageId}`)).toBe(true)
      if (e.type === EventType.TOOL_CALL_START) open.add(`tool:${e.toolCallId}`)
      if (e.type === EventType.TOOL_CALL_END) expect(open.delete(`tool:${e.toolCallId}`)).toBe(true)
    }
    expect([...open]).toEqual([])
  }

  it('a reset mid-arguments ends the open call before RUN_ERROR MODEL_ERROR; the thread takes new input', async () => {
    const s = await serve()
    queue.push(
      streamOf(
        [
          chunk({ role: 'assistant', content: 'Publishing.' }),
          chunk({
            tool_calls: [
              { index: 0, id: 'call_pub', type: 'function', function: { name: 'publish_release', arguments: '' } },
            ],
          }),
          chunk({ tool_calls: [{ index: 0, function: { arguments: '{"vers' } }] }),
        ],
        { drop: true },
      ),
    )
    const threadId = newThreadId()
    const r = await postRun(s, runInput(threadId, [userMessage('publish v2.1')]))
    expect(types(r.events)).toEqual([
      EventType.RUN_STARTED,
      EventType.TEXT_MESSAGE_START,
      EventType.TEXT_MESSAGE_CONTENT,
      EventType.TEXT_MESSAGE_END,
      EventType.TOOL_CALL_START,
      EventType.TOOL_CALL_ARGS,
      EventType.TOOL_CALL_END,
      EventType.RUN_ERROR,
    ])
    expect(r.events[6]).toMatchObject({ toolCallId: 'call_pub' })
    expect(r.events[7]).toMatchObject({ code: 'MODEL_ERROR' })
    expectClosed(r.events as { type: string }[])

    // The call never ran and is not in the history: the thread is idle and answers new input.
    queue.push(streamOf([chunk({ content: 'ok' }), chunk({}, 'stop')]))
    const again = await postRun(s, runInput(threadId, [userMessage('again')]))
    expect(textOf(again.events)).toBe('ok')
    expect(interruptsOf(again.events)).toEqual([])
    expect((requests[1]!.messages as { role: string }[]).map((m) => m.role)).toEqual(['system', 'user', 'user'])
  })

  it('a reset mid-text ends the open message before RUN_ERROR MODEL_ERROR', async () => {
    const s = await serve()
    queue.push(streamOf([chunk({ role: 'assistant', content: 'Half an ans' })], { drop: true }))
    const threadId = newThreadId()
    const r = await postRun(s, runInput(threadId, [userMessage('hello')]))
    expect(types(r.events)).toEqual([
      EventType.RUN_STARTED,
      EventType.TEXT_MESSAGE_START,
      EventType.TEXT_MESSAGE_CONTENT,
      EventType.TEXT_MESSAGE_END,
      EventType.RUN_ERROR,
    ])
    expect(r.events[4]).toMatchObject({ code: 'MODEL_ERROR' })
    expectClosed(r.events as { type: string }[])
    queue.push(streamOf([chunk({ content: 'ok' }), chunk({}, 'stop')]))
    expect(textOf((await postRun(s, runInput(threadId, [userMessage('again')]))).events)).toBe('ok')
  })

  it('a stream that ends cleanly without finish_reason counts as truncated', async () => {
    const s = await serve()
    queue.push((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/event-stream' })
      res.end(chunk({ content: 'cut' }))
    })
    const r = await postRun(s, runInput(newThreadId(), [userMessage('hello')]))
    expect(r.events[r.events.length - 1]).toMatchObject({ type: EventType.RUN_ERROR, code: 'MODEL_ERROR' })
  })
})
