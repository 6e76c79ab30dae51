import net from 'node:net'
import type { AddressInfo } from 'node:net'
import type { Server } from 'node:http'
import { serve } from '@hono/node-server'
import { Hono } from 'hono'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { authHeader, newThreadId, postRun, runInput, startTestServer, userMessage } from '../../test-utils/harness.ts'
import type { ServerEnv } from '../env.ts'
import { BodyBudget } from './body-budget.ts'
import { errorHandler } from './error-handler.ts'
import { jsonBody } from './json-body.ts'
import { closeOverUnreadBodies } from './unread-body.ts'

// A refused body is never read: the server's socket reads only what arrived before the refusal (at most a few
// 64 KiB chunks), answers with `Connection: close`, half-closes, and destroys the socket shortly after.

const MiB = 1024 * 1024
let server: Server
let port: number
/** The server side of every accepted connection, by the client's local port. */
const accepted = new Map<number, net.Socket>()

beforeAll(async () => {
  const app = new Hono<ServerEnv>()
  app.onError(errorHandler(() => undefined))
  app.use('*', closeOverUnreadBodies)
  const budget = new BodyBudget({ total: 2 * MiB, perPrincipal: 0 })
  app.use('*', async (c, next) => {
    c.set('principal', 'alice')
    c.set('bodyBudget', budget)
    await next()
  })
  app.post('/json', jsonBody({ maxBodyBytes: 8 * MiB, maxJsonDepth: 64 }), (c) => c.json({ ok: true }))
  // A route that answers without reading its body (as a 401 of authentication does).
  app.post('/unread', (c) => c.json({ error: { code: 'UNAUTHENTICATED' } }, 401))
  await new Promise<void>((resolve) => {
    server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info: AddressInfo) => {
      port = info.port
      resolve()
    }) as Server
  })
  server.on('connection', (socket: net.Socket) => accepted.set(socket.remotePort!, socket))
})
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

interface Exchange {
  /** Everything the client received until the server ended the connection. */
  readonly answer: string
  /** How the connection ended for the client: 'end' (FIN after the answer) or the socket error's code. */
  readonly ended: string
  /** Bytes of the request the server's socket read. */
  readonly serverRead: number
  /** The server's socket, for its close. */
  readonly serverSocket: net.Socket
}

/** Sends `head` and then `bodyBytes` bytes of spaces (written as fast as the server takes them), reading meanwhile. */
function exchange(head: string, bodyBytes: number): Promise<Exchange> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ port, host: '127.0.0.1' })
    let answer = ''
    let ended = ''
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1')))
    socket.once('end', () => (ended ||= 'end'))
    socket.on('error', (error: NodeJS.ErrnoException) => (ended ||= error.code ?? 'error'))
    socket.once('connect', () => {
      socket.write(head)
      socket.write(Buffer.alloc(bodyBytes, 0x20))
      // Sent in full only if the server reads it all; a client that got its answer stops waiting for that.
      const waitForAnswer = setInterval(() => {
        if (!ended) return
        clearInterval(waitForAnswer)
        const serverSocket = accepted.get(socket.localPort!)
        if (!serverSocket) return reject(new Error('no server socket'))
        resolve({ answer, ended, serverRead: serverSocket.bytesRead, serverSocket })
        socket.destroy()
      }, 20)
    })
  })
}

const closed = (socket: net.Socket) =>
  socket.destroyed ? Promise.resolve() : new Promise<void>((resolve) => socket.once('close', () => resolve()))

const post = (path: string, length: number) =>
  `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`

describe('refused bodies are left unread', () => {
  it('a declared length over the limit: 413 with Connection: close, then the server ends; it read < 1 MiB of 64 MiB', async () => {
    const result = await exchange(post('/json', 64 * MiB), 64 * MiB)
    expect(result.answer).toMatch(/^HTTP\/1\.1 413 /)
    expect(result.answer.toLowerCase()).toContain('connection: close')
    expect(result.answer).toContain('"code":"PAYLOAD_TOO_LARGE"')
    expect(result.ended).toBe('end')
    expect(result.serverRead).toBeLessThan(MiB)
    await closed(result.serverSocket)
    expect(result.serverSocket.bytesRead).toBeLessThan(MiB)
  })

  it('a body over the body budget: 503 SERVER_BUSY unread (the server read < 1 MiB of 4 MiB)', async () => {
    const result = await exchange(post('/json', 4 * MiB), 4 * MiB)
    expect(result.answer).toMatch(/^HTTP\/1\.1 503 /)
    expect(result.answer).toContain('"code":"SERVER_BUSY"')
    expect(result.ended).toBe('end')
    await closed(result.serverSocket)
    expect(result.serverSocket.bytesRead).toBeLessThan(MiB)
  })

  it('an answer that did not read a large body closes the connection without reading it', async () => {
    const result = await exchange(post('/unread', 32 * MiB), 32 * MiB)
    expect(result.answer).toMatch(/^HTTP\/1\.1 401 /)
    expect(result.answer.toLowerCase()).toContain('connection: close')
    await closed(result.serverSocket)
    expect(result.serverSocket.bytesRead).toBeLessThan(MiB)
  })

  it('a small unread body is left to Node: the connection stays reusable', async () => {
    const socket = net.connect({ port, host: '127.0.0.1' })
    let answer = ''
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1')))
    await new Promise((resolve) => socket.once('connect', resolve))
    socket.write(post('/unread', 1000) + ' '.repeat(1000))
    socket.write(post('/unread', 10) + ' '.repeat(10))
    for (let i = 0; i < 200 && answer.split('HTTP/1.1 401').length < 3; i++) await new Promise((r) => setTimeout(r, 20))
    expect(answer.split('HTTP/1.1 401')).toHaveLength(3)
    expect(answer.toLowerCase()).not.toContain('connection: close')
    socket.destroy()
  })

  it('fetch gets the 413 of a 64 MiB body (the client stops sending on the early answer)', async () => {
    const response = await fetch(`http://127.0.0.1:${port}/json`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: new Uint8Array(64 * MiB).fill(0x20),
    })
    expect(response.status).toBe(413)
    expect(response.headers.get('connection')).toBe('close')
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('PAYLOAD_TOO_LARGE')
  })

  it('an accepted body still parses, and the next request on the connection is served', async () => {
    const body = JSON.stringify({ hello: 'x'.repeat(100_000) })
    for (let i = 0; i < 2; i++) {
      const response = await fetch(`http://127.0.0.1:${port}/json`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body,
      })
      expect(response.status).toBe(200)
      expect(await response.json()).toEqual({ ok: true })
    }
  })
})

describe('the agent server (real app): answers over large unread bodies', () => {
  it('an unauthenticated 32 MiB POST gets 401 with Connection: close; an authenticated client is served meanwhile', async () => {
    const agentServer = await startTestServer()
    try {
      const refused = fetch(`${agentServer.baseUrl}/runs`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Authorization: 'Bearer wrong-token' },
        body: new Uint8Array(32 * MiB).fill(0x20),
      })
      const served = await postRun(agentServer, runInput(newThreadId(), [userMessage('hello')]), {
        headers: authHeader('bob'),
        principal: 'bob',
      })
      expect(served.status).toBe(200)
      const response = await refused
      expect(response.status).toBe(401)
      expect(response.headers.get('connection')).toBe('close')
      await response.text()
    } finally {
      await agentServer.dispose()
    }
  })
})
