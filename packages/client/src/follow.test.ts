/**
 * `follow` against a real HTTP server on 127.0.0.1 that cuts, silences and garbles its event stream
 * on purpose. The real agent server's follow is exercised in `decisions-client.server.test.ts`.
 */
import type { InterludeError } from '@interlude/protocol'
import { describe, expect, it } from 'vitest'
import { createDecisionsClient } from './decisions-client.ts'
import type { FollowedEvent, FollowOptions } from './follow.ts'
import { frame, scriptedServers, sendJson, sseHead } from './test-utils/scripted-server.ts'

const serve = scriptedServers()

const text = (n: number) => ({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'm', delta: `δ${n} 🚀` })
const fast: FollowOptions = { backoff: { initialMs: 1, maxMs: 4 } }

/** Collects events until `stopAfterId`, then aborts (or until the iteration ends or throws). */
async function collect(baseUrl: string, threadId: string, options: FollowOptions, stopAfterId?: number) {
  const controller = new AbortController()
  const events: FollowedEvent[] = []
  let error: InterludeError | undefined
  try {
    for await (const e of createDecisionsClient({ baseUrl }).follow(threadId, {
      ...options,
      signal: controller.signal,
    })) {
      events.push(e)
      if (e.id === stopAfterId) controller.abort()
    }
  } catch (e) {
    error = e as InterludeError
  }
  return { events, error }
}

describe('follow', () => {
  it('reconnects after a cut inside a frame with Last-Event-ID, without duplicates or gaps', async () => {
    const server = await serve((req, res, i) => {
      sseHead(res)
      if (i === 0) {
        // 3, 4, 5 whole, then half of 6 (inside its emoji), then the connection dies.
        const half = Buffer.from(frame(6, text(6)))
        res.write(frame(3, text(3)) + frame(4, text(4)) + frame(5, text(5)))
        res.write(half.subarray(0, half.length - 6), () => res.destroy())
      } else if (i === 1) {
        // A server that replays a little too much: 4 and 5 again, then 6 to 8.
        res.write([4, 5, 6, 7, 8].map((n) => frame(n, text(n))).join(''))
      }
    })
    const { events, error } = await collect(server.baseUrl, 't 1', { ...fast, after: 2 }, 8)
    expect(error).toBeUndefined()
    expect(events.map((e) => e.id)).toEqual([3, 4, 5, 6, 7, 8])
    expect(events[3]!.event).toEqual(text(6))
    const [first, second] = server.requests
    expect(first!.url).toBe('/api/agent/threads/t%201/events?follow=1&after=2')
    expect(first!.headers['last-event-id']).toBe('2')
    expect(first!.headers.accept).toBe('text/event-stream')
    expect(second!.url).toBe('/api/agent/threads/t%201/events?follow=1&after=5')
    expect(second!.headers['last-event-id']).toBe('5')
  })

  it('reconnects after a clean end of stream and after a frame outside the log', async () => {
    const server = await serve((_req, res, i) => {
      sseHead(res)
      if (i === 0) res.end(frame(1, text(1)))
      else if (i === 1) res.end(frame(undefined, { type: 'RUN_ERROR', code: 'INTERNAL', message: 'Internal error' }))
      else res.write(frame(2, text(2)))
    })
    const reconnects: (string | undefined)[] = []
    const { events, error } = await collect(
      server.baseUrl,
      't',
      { ...fast, onReconnect: ({ error }) => reconnects.push(error?.code) },
      2,
    )
    expect(error).toBeUndefined()
    expect(events.map((e) => e.id)).toEqual([1, 2])
    expect(reconnects).toEqual([undefined, 'NETWORK_ERROR'])
    expect(server.requests.map((r) => r.headers['last-event-id'])).toEqual(['0', '1', '1'])
  })

  it('reconnects after a 429, with or without the envelope', async () => {
    const server = await serve((_req, res, i) => {
      if (i === 0) return res.writeHead(429).end('Too Many Requests')
      if (i === 1) return sendJson(res, 429, { error: { code: 'RATE_LIMITED', message: 'Too many streams.' } })
      sseHead(res)
      res.write(frame(1, text(1)))
    })
    const reconnects: (string | undefined)[] = []
    const { events } = await collect(
      server.baseUrl,
      't',
      { ...fast, onReconnect: ({ error }) => reconnects.push(error?.code) },
      1,
    )
    expect(events.map((e) => e.id)).toEqual([1])
    expect(reconnects).toEqual(['RATE_LIMITED', 'RATE_LIMITED'])
  })

  it('replaces a silent connection (no frame, no ping) after idleTimeoutMs', async () => {
    const server = await serve((_req, res, i) => {
      sseHead(res)
      if (i === 1) res.write(frame(1, text(1)))
    })
    const { events } = await collect(server.baseUrl, 't', { ...fast, idleTimeoutMs: 50 }, 1)
    expect(events.map((e) => e.id)).toEqual([1])
    expect(server.requests).toHaveLength(2)
  })

  it('throws refusals and malformed streams at once', async () => {
    const server = await serve((_req, res, i) => {
      if (i === 0) return sendJson(res, 404, { error: { code: 'THREAD_NOT_FOUND', message: 'Thread not found.' } })
      if (i === 1) return res.writeHead(200, { 'Content-Type': 'text/html' }).end('<html>')
      sseHead(res)
      res.end(`${frame(1, text(1))}id: 2\ndata: {not json\n\n`)
    })
    const notFound = await collect(server.baseUrl, 't', fast)
    expect(notFound.error?.code).toBe('THREAD_NOT_FOUND')
    const html = await collect(server.baseUrl, 't', fast)
    expect(html.error?.details).toMatchObject({ reason: 'not_event_stream' })
    const garbled = await collect(server.baseUrl, 't', fast)
    expect(garbled.events.map((e) => e.id)).toEqual([1])
    expect(garbled.error?.details).toMatchObject({ reason: 'invalid_json' })
    expect(server.requests).toHaveLength(3)
  })

  it('gives up after maxAttempts connections in a row that deliver nothing', async () => {
    const server = await serve((_req, res) => res.destroy())
    const { error } = await collect(server.baseUrl, 't', { ...fast, maxAttempts: 3 })
    expect(error?.code).toBe('NETWORK_ERROR')
    expect(server.requests).toHaveLength(4)
  })

  it('closes its connection when the consumer stops early', async () => {
    let closed: () => void = () => undefined
    const done = new Promise<void>((resolve) => (closed = resolve))
    const server = await serve((_req, res) => {
      sseHead(res)
      res.write(frame(1, text(1)) + frame(2, text(2)))
      res.on('close', closed)
    })
    for await (const e of createDecisionsClient({ baseUrl: server.baseUrl }).follow('t')) if (e.id === 1) break
    await done
    expect(server.requests).toHaveLength(1)
  })
})
