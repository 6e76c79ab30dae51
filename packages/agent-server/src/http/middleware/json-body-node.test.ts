import http from 'node:http'
import net from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ThreadSnapshot } from '@interlude/protocol'
import type { TestServer } from '../../test-utils/harness.ts'
import { authHeader, newThreadId, runInput, startTestServer, userMessage } from '../../test-utils/harness.ts'
import { readJsonBody } from './json-body.ts'

/**
 * Under @hono/node-server the JSON body is read from Node's own request (`incomingReader` in json-body.ts), not from
 * a web stream: bytes arriving in pieces, a multi-byte character split between them, a client that goes away in the
 * middle of its body, and the body idle timeout — over a real socket.
 */

interface RawAnswer {
  readonly status: number
  readonly body: string
}

/** POST {base}/runs with `parts` written one by one, `gapMs` apart, on a fresh connection. */
function postInParts(server: TestServer, parts: readonly Buffer[], gapMs: number, length?: number): Promise<RawAnswer> {
  const url = new URL(`${server.baseUrl}/runs`)
  const total = length ?? parts.reduce((n, p) => n + p.byteLength, 0)
  return new Promise((resolve, reject) => {
    const request = http.request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        agent: false,
        headers: { ...authHeader('alice'), 'Content-Type': 'application/json', 'Content-Length': String(total) },
      },
      (response) => {
        const chunks: Buffer[] = []
        response.on('data', (c: Buffer) => chunks.push(c))
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString() }))
        response.on('error', reject)
      },
    )
    request.on('error', reject)
    void (async () => {
      for (const part of parts) {
        request.write(part)
        await new Promise((r) => setTimeout(r, gapMs))
      }
      request.end()
    })()
  })
}

async function snapshot(server: TestServer, threadId: string): Promise<ThreadSnapshot> {
  const response = await fetch(`${server.baseUrl}/threads/${threadId}`, { headers: authHeader('alice') })
  expect(response.status).toBe(200)
  return (await response.json()) as ThreadSnapshot
}

describe('the JSON body read from Node’s request (real socket)', () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startTestServer({ limits: { bodyIdleTimeoutMs: 300 } })
  })
  afterAll(async () => {
    await server.dispose()
  })

  it('a body in five pieces, a 4-byte emoji split between two of them, is read whole and stored intact', async () => {
    const threadId = newThreadId()
    const text = 'hello 🚀 wörld'
    const bytes = Buffer.from(JSON.stringify(runInput(threadId, [userMessage(text)])))
    const rocket = bytes.indexOf(Buffer.from('🚀'))
    expect(rocket).toBeGreaterThan(0)
    const cuts = [0, 10, rocket + 2, rocket + 3, bytes.length - 5, bytes.length]
    const parts = cuts.slice(1).map((end, i) => bytes.subarray(cuts[i], end))
    const answer = await postInParts(server, parts, 15)
    expect(answer.status).toBe(200)
    expect(answer.body).toContain('RUN_FINISHED')
    const user = (await snapshot(server, threadId)).messages.find((m) => m.role === 'user')
    expect(user?.content).toBe(text)
  })

  it('a body that stalls past the idle timeout is refused (400 body_timeout); the server keeps serving', async () => {
    const threadId = newThreadId()
    const bytes = Buffer.from(JSON.stringify(runInput(threadId, [userMessage('slow')])))
    // The rest of the declared length never comes.
    const answer = await postInParts(server, [bytes.subarray(0, 20)], 1_000, bytes.length)
    expect(answer.status).toBe(400)
    expect(answer.body).toContain('body_timeout')
    const next = await postInParts(
      server,
      [Buffer.from(JSON.stringify(runInput(newThreadId(), [userMessage('hi')])))],
      0,
    )
    expect(next.status).toBe(200)
  })

  it('a client that goes away in the middle of its body changes nothing and does not stop the server', async () => {
    const threadId = newThreadId()
    const bytes = Buffer.from(JSON.stringify(runInput(threadId, [userMessage('gone')])))
    const url = new URL(`${server.baseUrl}/runs`)
    await new Promise<void>((resolve) => {
      const request = http.request({
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        agent: false,
        headers: { ...authHeader('alice'), 'Content-Type': 'application/json', 'Content-Length': String(bytes.length) },
      })
      request.on('error', () => resolve())
      request.write(bytes.subarray(0, 30))
      setTimeout(() => {
        request.destroy()
        resolve()
      }, 50)
    })
    await new Promise((r) => setTimeout(r, 100))
    const missing = await fetch(`${server.baseUrl}/threads/${threadId}`, { headers: authHeader('alice') })
    expect(missing.status).toBe(404)
    await missing.text()
    const next = await postInParts(
      server,
      [Buffer.from(JSON.stringify(runInput(newThreadId(), [userMessage('hi')])))],
      0,
    )
    expect(next.status).toBe(200)
  })

  it('a request already gone when its body is read (half-closed during authentication) never hangs the read', async () => {
    const body = JSON.stringify({ hello: 'world' })
    let cleanup = () => undefined as void
    const outcome = new Promise<string>((resolve) => {
      const plain = http.createServer((incoming) => {
        // Authentication and quotas take a moment; the client half-closed meanwhile, Node destroyed the request.
        setTimeout(() => {
          const read = readJsonBody(new Request('http://localhost/'), 1024, incoming).then(
            (value) => `read ${JSON.stringify(value)}`,
            (error: unknown) => `refused: ${(error as Error).message}`,
          )
          const hung = new Promise<string>((r) => setTimeout(() => r('hung'), 2_000))
          void Promise.race([read, hung]).then(resolve)
        }, 100)
      })
      plain.listen(0, '127.0.0.1', () => {
        const { port } = plain.address() as net.AddressInfo
        const socket = net.connect(port, '127.0.0.1', () => {
          socket.end(
            `POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n` +
              `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
          )
        })
        socket.on('error', () => undefined)
        cleanup = () => {
          socket.destroy()
          plain.close()
        }
      })
    })
    const answer = await outcome
    cleanup()
    // The whole body had arrived before the request was destroyed: it is read from Node's buffer.
    expect(answer).toBe('read {"hello":"world"}')
  })
})
