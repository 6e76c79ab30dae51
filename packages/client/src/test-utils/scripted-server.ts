import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach } from 'vitest'

export interface RecordedRequest {
  readonly method: string
  readonly url: string
  readonly headers: http.IncomingHttpHeaders
  readonly body: string
}

export type Handler = (request: RecordedRequest, response: http.ServerResponse, index: number) => void

/**
 * A real HTTP server on 127.0.0.1 whose answers a test writes by hand: hostile bodies, cut streams,
 * silent connections — what a real agent server is never asked to do. Records every request.
 */
export async function scriptedServer(handler: Handler) {
  const requests: RecordedRequest[] = []
  const waiters: { count: number; resolve: () => void }[] = []
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const recorded = {
        method: req.method ?? 'GET',
        url: req.url ?? '/',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      }
      requests.push(recorded)
      handler(recorded, res, requests.length - 1)
      for (const w of waiters.filter((w) => requests.length >= w.count)) w.resolve()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    baseUrl: `http://127.0.0.1:${port}/api/agent`,
    requests,
    /** Resolves once `count` requests have arrived. */
    requestsReach: (count: number) =>
      new Promise<void>((resolve) => {
        if (requests.length >= count) resolve()
        else waiters.push({ count, resolve })
      }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

export function sendJson(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body))
}

export function sseHead(res: http.ServerResponse): void {
  res.writeHead(200, { 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-cache' })
}

/** One frame as the server writes it (docs/protocol.md, "SSE framing"). */
export function frame(id: number | undefined, event: object): string {
  return `${id === undefined ? '' : `id: ${id}\n`}data: ${JSON.stringify(event)}\n\n`
}

/** For a test file: starts scripted servers, each closed after the test that started it. */
export function scriptedServers(): (handler: Handler) => ReturnType<typeof scriptedServer> {
  const open: (() => Promise<void>)[] = []
  afterEach(async () => {
    await Promise.all(open.splice(0).map((close) => close()))
  })
  return async (handler) => {
    const server = await scriptedServer(handler)
    open.push(server.close)
    return server
  }
}
