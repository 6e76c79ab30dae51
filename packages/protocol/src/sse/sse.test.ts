import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { InterludeError } from '../errors.ts'
import type { SseFrame } from './decoder.ts'
import { decodeSse } from './decoder.ts'
import { encodeComment, encodeEvent, encodeEventFrame, HEARTBEAT_FRAME, SseEncodeError } from './encoder.ts'
import type { Event as AgUiEvent } from '@ag-ui/core'
import { EventSchema } from '@ag-ui/core/schemas'
import { decodeEventBatches, decodeEvents } from './events.ts'

const encoder = new TextEncoder()

/** A ReadableStream that delivers `bytes` cut at the given offsets. */
function streamOf(bytes: Uint8Array, cuts: readonly number[] = []): ReadableStream<Uint8Array> {
  const points = [...new Set(cuts.filter((c) => c > 0 && c < bytes.length))].sort((a, b) => a - b)
  const chunks: Uint8Array[] = []
  let start = 0
  for (const p of [...points, bytes.length]) {
    chunks.push(bytes.slice(start, p))
    start = p
  }
  return new ReadableStream({
    pull(controller) {
      const next = chunks.shift()
      if (next === undefined) controller.close()
      else controller.enqueue(next)
    },
  })
}

async function collect(stream: ReadableStream<Uint8Array>, options = {}): Promise<SseFrame[]> {
  const out: SseFrame[] = []
  for await (const frame of decodeSse(stream, options)) out.push(frame)
  return out
}

async function failureOf(run: () => Promise<unknown>): Promise<InterludeError> {
  try {
    await run()
  } catch (error) {
    if (InterludeError.isInstance(error)) return error
    throw new Error(`expected an InterludeError, got ${String(error)}`)
  }
  throw new Error('expected a failure')
}

const MULTILINGUAL = [
  '部署 v2.1 到生产环境',
  '🚀🎉 shipped',
  'naïve café',
  '👩‍👩‍👧‍👦 family',
  '𝄞 clef',
  '\u2028line sep',
  'quote " and \\ backslash',
]

function eventsFixture() {
  return MULTILINGUAL.map((delta, i) => ({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'm1', delta: `${delta} #${i}` }))
}

describe('encoder', () => {
  it('frames events as id + single data line, LF only', () => {
    const frame = encodeEvent({ type: 'RUN_STARTED', threadId: 't', runId: 'r' }, 7)
    expect(frame).toBe('id: 7\ndata: {"type":"RUN_STARTED","threadId":"t","runId":"r"}\n\n')
    expect(frame).not.toContain('\r')
    expect(encodeEvent({ type: 'X' })).toBe('data: {"type":"X"}\n\n')
    // Line and paragraph separators inside strings stay escaped or on one line.
    expect(encodeEvent({ type: 'X', delta: 'a\nb\r\nc' }).split('\n').length).toBe(3)
  })

  it('refuses ids with CR, LF or NUL, empty ids and multi-line data', () => {
    expect(() => encodeEventFrame('{}', '1\nid: 2')).toThrow(SseEncodeError)
    expect(() => encodeEventFrame('{}', '1\r')).toThrow(SseEncodeError)
    expect(() => encodeEventFrame('{}', 'a\0')).toThrow(SseEncodeError)
    expect(() => encodeEventFrame('{}', '')).toThrow(SseEncodeError)
    expect(() => encodeEventFrame('{\n}', 1)).toThrow(SseEncodeError)
    expect(() => encodeEvent(undefined)).toThrow(SseEncodeError)
  })

  it('writes comments and the heartbeat as comment frames', () => {
    expect(HEARTBEAT_FRAME).toBe(': ping\n\n')
    expect(encodeComment('a\nb')).toBe(': a\n: b\n\n')
  })
})

describe('decodeSse', () => {
  it('decodes LF, CR and CRLF line ends, multi-line data, comments and ids', async () => {
    const comments: string[] = []
    const text = 'id: 1\ndata: a\n\n: ping\n\nid: 2\r\ndata: b1\r\ndata: b2\r\n\r\nid: 3\rdata: c\r\rdata: d\n\n'
    const frames = await collect(streamOf(encoder.encode(text)), { onComment: (c: string) => comments.push(c) })
    expect(frames.map((f) => [f.id, f.lastEventId, f.data])).toEqual([
      ['1', '1', 'a'],
      ['2', '2', 'b1\nb2'],
      ['3', '3', 'c'],
      [undefined, '3', 'd'], // last event id persists across frames without id
    ])
    expect(comments).toEqual(['ping'])
  })

  it('ignores event:, retry: and unknown fields as the SSE spec requires, without dropping the frame', async () => {
    const retries: number[] = []
    const frames = await collect(streamOf(encoder.encode('event: error\nretry: 1500\nfoo: bar\ndata: {"x":1}\n\n')), {
      onRetry: (ms: number) => retries.push(ms),
    })
    expect(frames).toEqual([{ id: undefined, lastEventId: undefined, event: 'error', data: '{"x":1}' }])
    expect(retries).toEqual([1500])
  })

  it('strips a leading BOM split across chunks', async () => {
    const bytes = new Uint8Array([0xef, 0xbb, 0xbf, ...encoder.encode('data: x\n\n')])
    expect((await collect(streamOf(bytes, [1, 2]))).map((f) => f.data)).toEqual(['x'])
  })

  it('reports a frame cut off by the end of the stream instead of dropping it', async () => {
    const error = await failureOf(() => collect(streamOf(encoder.encode('data: {"a":1}\n\ndata: {"b":'))))
    expect(error.code).toBe('PROTOCOL_ERROR')
    expect(error.details).toEqual({ reason: 'truncated_frame' })
  })

  it('reports invalid UTF-8 and a multi-byte character cut by the end of the stream', async () => {
    const invalid = new Uint8Array([...encoder.encode('data: '), 0xc3, 0x28, 0x0a, 0x0a])
    expect((await failureOf(() => collect(streamOf(invalid)))).details).toEqual({ reason: 'invalid_utf8' })
    const cut = encoder.encode('data: 部\n\n').slice(0, 8)
    expect((await failureOf(() => collect(streamOf(cut)))).details).toEqual({ reason: 'invalid_utf8' })
  })

  it('caps the frame size with a typed error, for one long line and for many data lines', async () => {
    const long = encoder.encode(`data: ${'x'.repeat(5000)}\n\n`)
    expect((await failureOf(() => collect(streamOf(long, [100, 2000]), { maxFrameSize: 1024 }))).details).toEqual({
      reason: 'frame_too_large',
    })
    const many = encoder.encode(`${'data: 0123456789\n'.repeat(200)}\n`)
    expect((await failureOf(() => collect(streamOf(many, [7, 999]), { maxFrameSize: 1024 }))).details).toEqual({
      reason: 'frame_too_large',
    })
    // Frames below the cap pass, however many there are.
    const okFrames = await collect(streamOf(encoder.encode('data: 0123456789\n\n'.repeat(500))), { maxFrameSize: 1024 })
    expect(okFrames).toHaveLength(500)
  })

  it('stops reading and cancels the body when aborted', async () => {
    let cancelled = false
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(encoder.encode('data: 1\n\n'))
      },
      cancel() {
        cancelled = true
      },
    })
    const controller = new AbortController()
    const seen: string[] = []
    for await (const frame of decodeSse(stream, { signal: controller.signal })) {
      seen.push(frame.data)
      controller.abort()
      break
    }
    expect(seen).toEqual(['1'])
    expect(cancelled).toBe(true)
  })
})

describe('decodeSse properties', () => {
  const wire = eventsFixture()
    .map((e, i) => encodeEvent(e, i + 1))
    .join('')
  const bytes = encoder.encode(wire)
  const expected = eventsFixture().map((e) => JSON.stringify(e))

  it('decodes the same frames when the stream is cut at every single byte', async () => {
    for (let cut = 1; cut < bytes.length; cut++) {
      const frames = await collect(streamOf(bytes, [cut]))
      expect(
        frames.map((f) => f.data),
        `cut at byte ${cut}`,
      ).toEqual(expected)
    }
  })

  it('decodes the same frames under random chunkings (Chinese, emoji, CRLF)', async () => {
    const crlf = encoder.encode(wire.replaceAll('\n', '\r\n'))
    await fc.assert(
      fc.asyncProperty(
        fc.boolean(),
        fc.array(fc.integer({ min: 1, max: crlf.length - 1 }), { maxLength: 40 }),
        async (useCrlf, cuts) => {
          const frames = await collect(streamOf(useCrlf ? crlf : bytes, cuts))
          expect(frames.map((f) => f.data)).toEqual(expected)
          expect(frames.at(-1)?.lastEventId).toBe(String(expected.length))
        },
      ),
      { numRuns: 300 },
    )
  })

  it('round-trips any JSON event through encoder and decoder', async () => {
    const eventArb = fc.record({
      type: fc.constantFrom('TEXT_MESSAGE_CONTENT', 'CUSTOM', 'STATE_SNAPSHOT'),
      messageId: fc.string(),
      name: fc.string(),
      delta: fc.string({ unit: 'grapheme' }),
      value: fc.jsonValue(),
    })
    await fc.assert(
      fc.asyncProperty(
        fc.array(eventArb, { minLength: 1, maxLength: 8 }),
        fc.array(fc.nat(), { maxLength: 10 }),
        async (events, rawCuts) => {
          const payload = encoder.encode(events.map((e, i) => encodeEvent(e, i + 1)).join(HEARTBEAT_FRAME))
          const cuts = rawCuts.map((c) => (c % payload.length) + 1)
          const decoded: unknown[] = []
          const ids: (string | undefined)[] = []
          for await (const d of decodeEvents(streamOf(payload, cuts), { validate: (v) => v as never })) {
            decoded.push(d.event)
            ids.push(d.id)
          }
          expect(decoded).toEqual(JSON.parse(JSON.stringify(events)))
          expect(ids).toEqual(events.map((_, i) => String(i + 1)))
        },
      ),
      { numRuns: 150 },
    )
  })
})

describe('decodeEvents', () => {
  async function events(text: string) {
    const out: unknown[] = []
    for await (const d of decodeEvents(streamOf(encoder.encode(text)))) out.push(d.event)
    return out
  }

  it('yields validated AG-UI events with their ids', async () => {
    const out: { id: string | undefined; type: string }[] = []
    for await (const d of decodeEvents(
      streamOf(encoder.encode(encodeEvent({ type: 'RUN_STARTED', threadId: 't', runId: 'r' }, 4))),
    )) {
      out.push({ id: d.id, type: d.event.type })
    }
    expect(out).toEqual([{ id: '4', type: 'RUN_STARTED' }])
  })

  it.each([
    ['Hono error frame with text data', 'event: error\ndata: Internal Server Error\n\n', 'invalid_json'],
    ['a JSON array', 'data: [1,2]\n\n', 'invalid_event'],
    ['an object without type', 'data: {"threadId":"t"}\n\n', 'invalid_event'],
    ['a known event missing a field', 'data: {"type":"RUN_STARTED","threadId":"t"}\n\n', 'invalid_event'],
    ['a snapshot holding a null message', 'data: {"type":"MESSAGES_SNAPSHOT","messages":[null]}\n\n', 'invalid_event'],
  ])('turns %s into a typed PROTOCOL_ERROR', async (_name, text, reason) => {
    const error = await failureOf(() => events(text))
    expect(error.code).toBe('PROTOCOL_ERROR')
    expect(error.details).toEqual({ reason })
  })

  it('delivers the good frames before the bad one', async () => {
    const seen: string[] = []
    const error = await failureOf(async () => {
      for await (const d of decodeEvents(
        streamOf(encoder.encode(`${encodeEvent({ type: 'CUSTOM', name: 'a', value: 1 })}data: nope\n\n`)),
      )) {
        seen.push(d.event.type)
      }
    })
    expect(seen).toEqual(['CUSTOM'])
    expect(error.details).toEqual({ reason: 'invalid_json' })
  })

  it('wraps a custom validator failure as invalid_event', async () => {
    const error = await failureOf(async () => {
      for await (const _ of decodeEvents(streamOf(encoder.encode('data: {"type":"X"}\n\n')), {
        validate: () => {
          throw new Error('zod says no')
        },
      })) {
        /* drain */
      }
    })
    expect(error.details).toEqual({ reason: 'invalid_event' })
    expect(error.message).not.toContain('zod says no')
  })
})

describe('decodeEventBatches', () => {
  it('yields one batch per chunk, with every event of the chunk', async () => {
    const text = [1, 2, 3].map((i) => encodeEvent({ type: 'CUSTOM', name: `e${i}`, value: i }, i)).join('')
    const bytes = encoder.encode(text)
    const batches: string[][] = []
    for await (const batch of decodeEventBatches(streamOf(bytes, [bytes.length - 5]))) {
      batches.push(batch.map((d) => `${d.id}:${(d.event as { name: string }).name}`))
    }
    expect(batches).toEqual([['1:e1', '2:e2'], ['3:e3']])
  })

  it('delivers the valid events of a chunk before throwing for a bad one', async () => {
    const text = `${encodeEvent({ type: 'CUSTOM', name: 'ok', value: 1 }, 1)}data: {"type":"RUN_STARTED"}\n\n`
    const seen: string[] = []
    const error = await failureOf(async () => {
      for await (const batch of decodeEventBatches(streamOf(encoder.encode(text))))
        seen.push(...batch.map((d) => d.event.type))
    })
    expect(seen).toEqual(['CUSTOM'])
    expect(error.details).toEqual({ reason: 'invalid_event' })
  })

  it('validates with the zod EventSchema of @ag-ui/core at the boundary', async () => {
    const good = encodeEvent({ type: 'TOOL_CALL_START', toolCallId: 'tc', toolCallName: 'deploy' }, 1)
    const out: string[] = []
    for await (const d of decodeEvents(streamOf(encoder.encode(good)), {
      validate: (v) => EventSchema.parse(v) as AgUiEvent,
    }))
      out.push(d.event.type)
    expect(out).toEqual(['TOOL_CALL_START'])
    const bad = 'data: {"type":"TOOL_CALL_START","toolCallId":"tc"}\n\n'
    const error = await failureOf(async () => {
      for await (const _ of decodeEvents(streamOf(encoder.encode(bad)), {
        validate: (v) => EventSchema.parse(v) as AgUiEvent,
      })) {
        /* drain */
      }
    })
    expect(error.details).toEqual({ reason: 'invalid_event' })
  })
})
