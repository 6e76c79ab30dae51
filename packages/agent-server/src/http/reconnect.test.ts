import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { EventType } from '@interlude/protocol'
import { decodeEvents } from '@interlude/protocol/sse'
import type { AgUiEvent, Message } from '@interlude/protocol'
import type { ModelChunk, ModelProvider } from '../models/model.ts'
import type { TestServer } from '../test-utils/harness.ts'
import { authHeader, newThreadId, runInput, startTestServer, userMessage } from '../test-utils/harness.ts'

/**
 * A client that loses its connection mid-text and reconnects to `GET {base}/threads/:id/events`
 * with the last complete frame's id (Last-Event-ID, or ?after=) rebuilds exactly the text of an
 * uninterrupted run: no duplicated and no missing event, for cuts at many byte offsets — frame
 * boundaries, inside JSON, and inside multi-byte UTF-8 characters. The run is live while the
 * client is cut off (its model only streams the next chunk when the test grants it).
 */
const CHUNKS = ['Deploying ', '中文', '🚀 ', 'naïve ', 'café ', '😀😀', ' – ', 'done ', '字符', ' ✓']
const TEXT = CHUNKS.join('')

/** Per-run credits: the model yields chunk i only once i+1 credits were granted. */
class Credits {
  granted = 0
  #waiters: (() => void)[] = []
  grant(n = 1): void {
    this.granted += n
    for (const w of this.#waiters.splice(0)) w()
  }
  async take(i: number): Promise<void> {
    while (this.granted <= i) await new Promise<void>((resolve) => this.#waiters.push(resolve))
  }
}

const credits = new Map<string, Credits>()
const model: ModelProvider = {
  name: 'credits',
  async *stream(request): AsyncGenerator<ModelChunk> {
    const last = request.messages[request.messages.length - 1] as Message & { content: string }
    const gate = credits.get(last.content)
    for (let i = 0; i < CHUNKS.length; i++) {
      if (gate) await gate.take(i)
      yield { type: 'text', delta: CHUNKS[i]! }
    }
  },
}

let server: TestServer
beforeAll(async () => {
  server = await startTestServer({ agent: { model } })
})
afterAll(() => server.dispose())

const post = (threadId: string, key: string, signal?: AbortSignal) =>
  fetch(`${server.baseUrl}/runs`, {
    method: 'POST',
    headers: { ...authHeader('alice'), 'Content-Type': 'application/json' },
    body: JSON.stringify(runInput(threadId, [userMessage(key)])),
    ...(signal ? { signal } : {}),
  })

async function readAll(body: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  const reader = body.getReader()
  const parts: Uint8Array[] = []
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    parts.push(value)
  }
  return Buffer.concat(parts)
}

async function decode(bytes: Uint8Array): Promise<{ id: number; event: AgUiEvent }[]> {
  const out: { id: number; event: AgUiEvent }[] = []
  for await (const d of decodeEvents(
    (async function* () {
      yield bytes
    })(),
  ))
    out.push({ id: Number(d.id), event: d.event })
  return out
}

const count = (bytes: Uint8Array, marker: string) => Buffer.from(bytes).toString('latin1').split(marker).length - 1
const textOf = (events: { event: AgUiEvent }[]) =>
  events
    .filter((e) => e.event.type === EventType.TEXT_MESSAGE_CONTENT)
    .map((e) => (e.event as { delta: string }).delta)
    .join('')

describe('disconnect mid-text, reconnect with Last-Event-ID', () => {
  let reference: Uint8Array
  let referenceEvents: { id: number; event: AgUiEvent }[]

  beforeAll(async () => {
    reference = await readAll((await post(newThreadId(), 'reference')).body!)
    referenceEvents = await decode(reference)
  })

  /** Cut offsets: every frame boundary and its neighbours, and every byte inside a multi-byte character. */
  function cutPoints(): number[] {
    const points = new Set<number>()
    for (let i = 1; i < reference.length - 1; i++) {
      const byte = reference[i]!
      if ((byte & 0xc0) === 0x80) points.add(i) // a continuation byte: cut right before it = inside a character
      if (i % 31 === 0) points.add(i) // anywhere else (ids, JSON keys, the middle of a delta)
      if (reference[i - 1] === 10 && reference[i] === 10) {
        points.add(i - 1)
        points.add(i + 1)
      }
    }
    return [...points].filter((p) => p > 0 && p < reference.length).sort((a, b) => a - b)
  }

  it('the uninterrupted run is the reference', () => {
    expect(textOf(referenceEvents)).toBe(TEXT)
    expect(referenceEvents.map((e) => e.id)).toEqual(referenceEvents.map((_, i) => i + 1))
    expect(referenceEvents[referenceEvents.length - 1]!.event.type).toBe(EventType.RUN_FINISHED)
  })

  it('every cut point rebuilds the identical text with no duplicate or missing event', async () => {
    const points = cutPoints()
    expect(points.length).toBeGreaterThan(60)
    const insideCharacters = points.filter((p) => (reference[p]! & 0xc0) === 0x80)
    expect(insideCharacters.length).toBeGreaterThan(20)
    for (const [n, cut] of points.entries()) {
      const key = `cut-${cut}`
      const gate = new Credits()
      credits.set(key, gate)
      const threadId = newThreadId()
      const controller = new AbortController()
      const response = await post(threadId, key, controller.signal)
      const reader = response.body!.getReader()
      let received = new Uint8Array(0)
      // Read until `cut` bytes arrived, granting the model one chunk whenever everything granted was delivered.
      while (received.length < cut) {
        if (count(received, '"TEXT_MESSAGE_CONTENT"') >= gate.granted && gate.granted < CHUNKS.length) gate.grant()
        const { done, value } = await reader.read()
        if (done) break
        received = Buffer.concat([received, value])
      }
      // The connection drops after exactly `cut` bytes (possibly inside a frame or a character).
      controller.abort()
      await reader.cancel().catch(() => undefined)
      const kept = received.subarray(0, cut)
      const boundary = Buffer.from(kept).lastIndexOf('\n\n')
      const complete = boundary < 0 ? new Uint8Array(0) : kept.subarray(0, boundary + 2)
      const before = await decode(complete)
      // The run goes on without the client.
      gate.grant(CHUNKS.length)
      const lastId = before.length > 0 ? before[before.length - 1]!.id : undefined
      const byHeader = n % 2 === 0
      const url = `${server.baseUrl}/threads/${threadId}/events${!byHeader && lastId !== undefined ? `?after=${lastId}` : ''}`
      const headers = {
        ...authHeader('alice'),
        ...(byHeader && lastId !== undefined ? { 'Last-Event-ID': String(lastId) } : {}),
      }
      const after = await decode(await readAll((await fetch(url, { headers })).body!))
      const all = [...before, ...after]
      expect(
        all.map((e) => e.id),
        `cut at byte ${cut}`,
      ).toEqual(referenceEvents.map((e) => e.id))
      expect(
        all.map((e) => e.event.type),
        `cut at byte ${cut}`,
      ).toEqual(referenceEvents.map((e) => e.event.type))
      expect(textOf(all), `cut at byte ${cut}`).toBe(TEXT)
      credits.delete(key)
    }
  })
})
