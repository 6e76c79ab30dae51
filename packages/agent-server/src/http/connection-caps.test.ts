/**
 * The connection caps (docs/decisions.md#connections) with two principals behind one address, as an office NAT or a
 * reverse proxy makes them: one principal's burst or held streams never give the other a connection reset.
 */
import http from 'node:http'
import net from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import type { TestServer } from '../test-utils/harness.ts'
import { authHeader, postRun, runInput, startTestServer, userMessage } from '../test-utils/harness.ts'

let server: TestServer | undefined
const cleanups: (() => void)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) cleanup()
  await server?.dispose()
  server = undefined
})

/** One GET on the given agent (`false`: a connection of its own); rejects on a reset, like a browser would fail. */
function get(url: string, principal: 'alice' | 'bob', agent: http.Agent | false): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent, headers: authHeader(principal) }, (res) => {
      res.resume()
      res.once('end', () => resolve(res.statusCode ?? 0))
    })
    req.once('error', reject)
  })
}

/** Opens a follow stream (a long-held request) and resolves once its headers arrived. */
function hold(url: string, principal: 'alice' | 'bob'): Promise<http.ClientRequest> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent: false, headers: authHeader(principal) }, (res) => {
      expect(res.statusCode).toBe(200)
      res.resume()
      resolve(req)
    })
    req.once('error', (error) => (req.destroyed ? undefined : reject(error)))
    cleanups.push(() => req.destroy())
  })
}

async function threadWithOneRun(s: TestServer): Promise<string> {
  const threadId = `t_${Math.random().toString(36).slice(2)}`
  const run = await postRun(s, runInput(threadId, [userMessage('hello')]))
  expect(run.status).toBe(200)
  return threadId
}

describe('connection caps on a shared address', () => {
  it("a burst of one principal's keep-alive requests never resets another principal's", async () => {
    server = await startTestServer({ limits: { maxConnectionsPerIp: 8 } })
    const list = `${server.baseUrl}/threads`
    const burstAgent = new http.Agent({ keepAlive: true, maxSockets: 12 })
    cleanups.push(() => burstAgent.destroy())
    // 12 at once on 8 slots: 8 admitted, 4 wait for a socket to turn idle; then 8 idle keep-alive sockets stay.
    const burst = Array.from({ length: 12 }, () => get(list, 'alice', burstAgent))
    const during = Array.from({ length: 3 }, () => get(list, 'bob', false))
    expect(await Promise.all(burst)).toEqual(Array(12).fill(200))
    expect(await Promise.all(during)).toEqual(Array(3).fill(200))
    expect(server.connections().byAddress.get('127.0.0.1') ?? 0).toBeLessThanOrEqual(8)
    // The burst's idle sockets give way to bob's new connections, one each.
    for (let i = 0; i < 10; i++) expect(await get(list, 'bob', false)).toBe(200)
    // ...and alice's keep-alive agent simply opens new ones when it needs them.
    expect(await Promise.all(Array.from({ length: 4 }, () => get(list, 'alice', burstAgent)))).toEqual(
      Array(4).fill(200),
    )
  })

  it('a newcomer waits while every slot is busy and is served when one frees', async () => {
    server = await startTestServer({ limits: { maxConnectionsPerIp: 4 } })
    const threadId = await threadWithOneRun(server)
    const follow = `${server.baseUrl}/threads/${threadId}/events?follow=1`
    const held = await Promise.all(Array.from({ length: 4 }, () => hold(follow, 'alice')))
    let answered = false
    const waiting = get(`${server.baseUrl}/threads`, 'bob', false).then((status) => {
      answered = true
      return status
    })
    await expect.poll(() => server!.connections().waiting).toBe(1)
    expect(answered).toBe(false)
    held[0]!.destroy()
    expect(await waiting).toBe(200)
    expect(server.connections().waiting).toBe(0)
  })

  it('the waiting room is bounded, and a wait that nothing frees ends in 503 SERVER_BUSY, not a reset', async () => {
    server = await startTestServer({ limits: { maxConnectionsPerIp: 2, headersTimeoutMs: 1000 } })
    const threadId = await threadWithOneRun(server)
    const follow = `${server.baseUrl}/threads/${threadId}/events?follow=1`
    await Promise.all([hold(follow, 'alice'), hold(follow, 'alice')])
    const port = server.port
    /** A raw connection that sends a request and resolves with everything the server wrote before closing. */
    const raw = () => {
      const socket = net.connect(port, '127.0.0.1', () =>
        socket.write('GET /api/agent/threads HTTP/1.1\r\nHost: x\r\n\r\n'),
      )
      cleanups.push(() => socket.destroy())
      let answer = ''
      socket.on('data', (chunk: Buffer) => (answer += chunk.toString('utf8')))
      return new Promise<string>((resolve, reject) => {
        socket.once('error', reject)
        socket.once('close', () => resolve(answer))
      })
    }
    // The per-address waiting room holds as many as the cap (2 here); the next is turned away at once.
    const waiters = [raw(), raw()]
    await expect.poll(() => server!.connections().waiting).toBe(2)
    const turnedAway = await raw()
    expect(turnedAway).toMatch(/^HTTP\/1\.1 503 /)
    expect(turnedAway).toContain('Retry-After: 1')
    expect(turnedAway).toContain('"code":"SERVER_BUSY"')
    expect(server.connections().waiting).toBe(2)
    // Nothing frees: after headersTimeoutMs the waiters get the same answer, and the room empties.
    for (const answer of await Promise.all(waiters)) expect(answer).toMatch(/^HTTP\/1\.1 503 [^]*"code":"SERVER_BUSY"/)
    expect(server.connections().waiting).toBe(0)
  })

  it('with trustProxy the per-address cap is not applied (every client shares the proxy address)', async () => {
    server = await startTestServer({ trustProxy: true, limits: { maxConnectionsPerIp: 2 } })
    const threadId = await threadWithOneRun(server)
    const follow = `${server.baseUrl}/threads/${threadId}/events?follow=1`
    await Promise.all(Array.from({ length: 5 }, () => hold(follow, 'alice')))
    expect(server.connections().byAddress.get('127.0.0.1')).toBeGreaterThanOrEqual(5)
    expect(server.connections().waiting).toBe(0)
  })
})
