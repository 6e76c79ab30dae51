import { describe, expect, it } from 'vitest'
import { Recorder } from './recorder.ts'
import { createRecordingFetch } from './recording-fetch.ts'

const encoder = new TextEncoder()

/** A response whose body delivers `parts` one chunk at a time. */
function sseResponse(parts: readonly string[]): Response {
  const chunks = parts.map((part) => encoder.encode(part))
  return new Response(
    new ReadableStream<Uint8Array>({
      pull(controller) {
        const next = chunks.shift()
        if (next === undefined) controller.close()
        else controller.enqueue(next)
      },
    }),
    { status: 200, headers: { 'content-type': 'text/event-stream' } },
  )
}

async function readAll(response: Response): Promise<string> {
  return await response.text()
}

function setup(respond: (input: RequestInfo | URL, init?: RequestInit) => Promise<Response>) {
  let tick = 0
  const recorder = new Recorder({ now: () => tick++ })
  const recordingFetch = createRecordingFetch(recorder, respond as typeof fetch)
  return { recorder, recordingFetch }
}

describe('createRecordingFetch', () => {
  it('passes SSE bytes through unchanged and records each event once, also across chunk splits', async () => {
    const wire =
      'id: 1\ndata: {"type":"RUN_STARTED","threadId":"t","runId":"a"}\n\n: ping\n\nid: 2\ndata: {"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"你好 🚀"}\n\n'
    const cut = wire.indexOf('你') + 1
    const { recorder, recordingFetch } = setup(async () =>
      sseResponse([wire.slice(0, 20), wire.slice(20, cut), wire.slice(cut)]),
    )
    const body = JSON.stringify({
      threadId: 't',
      runId: 'a',
      messages: [{ id: 'u1', role: 'user', content: 'deploy' }],
      tools: [],
    })
    const response = await recordingFetch('/api/agent/runs', { method: 'POST', body })
    expect(await readAll(response)).toBe(wire)
    const frames = recorder.frames
    expect(frames.map((f) => f.kind)).toEqual([
      'request-start',
      'request-response',
      'sse-event',
      'sse-event',
      'request-end',
    ])
    expect(frames[0]).toMatchObject({
      requestId: 'r1',
      method: 'POST',
      path: '/api/agent/runs',
      purpose: 'run',
      input: {
        threadId: 't',
        runId: 'a',
        messageCount: 1,
        lastMessage: { id: 'u1', role: 'user', content: 'deploy' },
        toolCount: 0,
      },
    })
    expect(frames[2]).toMatchObject({ sseId: '1', event: { type: 'RUN_STARTED' } })
    expect(frames[3]).toMatchObject({ sseId: '2', event: { delta: '你好 🚀' } })
    expect(frames[4]).toMatchObject({ outcome: 'complete', eventCount: 2 })
  })

  it('classifies resume, events, thread, inbox, cancel, follow and decisions requests', async () => {
    const { recorder, recordingFetch } = setup(
      async () => new Response('{}', { status: 200, headers: { 'content-type': 'application/json' } }),
    )
    await recordingFetch('/api/agent/runs', {
      method: 'POST',
      body: JSON.stringify({
        threadId: 't',
        runId: 'b',
        messages: [],
        resume: [{ interruptId: 'i', status: 'cancelled' }],
      }),
    })
    await recordingFetch('/api/agent/threads/t/events?after=3')
    await recordingFetch(new URL('http://x/api/agent/threads/t'))
    await recordingFetch('/api/agent/threads?status=interrupted')
    await recordingFetch('/api/agent/threads/t/runs/b/cancel', { method: 'POST' })
    await recordingFetch('/api/agent/threads/t/events?after=3&follow=1')
    await recordingFetch('/api/agent/threads/t/decisions', {
      method: 'POST',
      body: JSON.stringify({ runId: 'd', resume: [{ interruptId: 'i', status: 'cancelled' }] }),
    })
    const starts = recorder.frames.filter((f) => f.kind === 'request-start')
    expect(starts.map((f) => f.purpose)).toEqual([
      'resume',
      'events',
      'thread',
      'inbox',
      'cancel',
      'follow',
      'decisions',
    ])
    expect(starts[6]).toMatchObject({ input: { runId: 'd', resume: [{ interruptId: 'i', status: 'cancelled' }] } })
    expect(starts[0]).toMatchObject({ input: { resume: [{ interruptId: 'i', status: 'cancelled' }] } })
  })

  it('records the error envelope of an admission error and leaves the body readable', async () => {
    const envelope = {
      error: { code: 'INTERRUPT_EXPIRED', message: 'The batch expired.', details: { interruptIds: ['i'] } },
    }
    const { recorder, recordingFetch } = setup(
      async () =>
        new Response(JSON.stringify(envelope), { status: 410, headers: { 'content-type': 'application/json' } }),
    )
    const response = await recordingFetch('/api/agent/runs', { method: 'POST', body: '{}' })
    expect(await response.json()).toEqual(envelope)
    expect(recorder.frames.slice(1)).toMatchObject([
      { kind: 'request-response', status: 410, ok: false, error: envelope.error },
      { kind: 'request-end', outcome: 'http-error', error: envelope.error },
    ])
  })

  it('records a network failure and rethrows it', async () => {
    const failure = new TypeError('fetch failed')
    const { recorder, recordingFetch } = setup(async () => {
      throw failure
    })
    await expect(recordingFetch('/api/agent/runs', { method: 'POST' })).rejects.toBe(failure)
    expect(recorder.frames[1]).toMatchObject({
      kind: 'request-end',
      outcome: 'network-error',
      error: { code: 'UNKNOWN', message: 'fetch failed' },
    })
  })

  it('records a cancelled body as aborted and cancels the original body', async () => {
    let cancelled: unknown
    const source = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(encoder.encode('data: {"type":"RUN_STARTED","threadId":"t","runId":"a"}\n\n'))
      },
      cancel(reason) {
        cancelled = reason
      },
    })
    const { recorder, recordingFetch } = setup(
      async () => new Response(source, { headers: { 'content-type': 'text/event-stream' } }),
    )
    const response = await recordingFetch('/api/agent/runs', { method: 'POST' })
    const reader = response.body!.getReader()
    await reader.read()
    await reader.cancel('stop')
    expect(cancelled).toBe('stop')
    expect(recorder.frames.at(-1)).toMatchObject({ kind: 'request-end', outcome: 'aborted', eventCount: 1 })
  })

  it('records a body cancelled right after its terminal event as complete (a normal pause), not aborted', async () => {
    const source = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(encoder.encode('data: {"type":"RUN_STARTED","threadId":"t","runId":"a"}\n\n'))
        controller.enqueue(
          encoder.encode(
            'data: {"type":"RUN_FINISHED","threadId":"t","runId":"a","outcome":{"type":"interrupt","interrupts":[{"id":"i","reason":"confirmation"}]}}\n\n',
          ),
        )
      },
    })
    const { recorder, recordingFetch } = setup(
      async () => new Response(source, { headers: { 'content-type': 'text/event-stream' } }),
    )
    const reader = (await recordingFetch('/api/agent/runs', { method: 'POST' })).body!.getReader()
    await reader.read()
    await reader.read()
    await reader.cancel('done')
    expect(recorder.frames.at(-1)).toMatchObject({ kind: 'request-end', outcome: 'complete', eventCount: 2 })
  })

  it('keeps a frame that is not JSON as text', async () => {
    const { recorder, recordingFetch } = setup(async () => sseResponse(['data: not json\n\n']))
    await (await recordingFetch('/api/agent/runs', { method: 'POST' })).text()
    expect(recorder.frames[2]).toMatchObject({ kind: 'sse-event', sseId: null, event: 'not json' })
  })
})
