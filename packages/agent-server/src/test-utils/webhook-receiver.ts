import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { Webhook } from 'standardwebhooks'

/** One request as the receiver got it, checked with the reference verifier of the Standard Webhooks spec. */
export interface ReceivedWebhook {
  readonly method: string
  readonly path: string
  readonly headers: http.IncomingHttpHeaders
  /** The raw body, as received. */
  readonly body: string
  /** `new Webhook(secret).verify(body, headers)`; `undefined` when verification failed (see `verifyError`). */
  readonly payload: unknown
  readonly verifyError: string | undefined
}

/** What to answer: a status code, or `hold` to keep the request open until `release()` or `close()`. */
export type ReceiverAnswer = number | { readonly status: number; readonly headers: Record<string, string> } | 'hold'

export interface WebhookReceiver {
  readonly port: number
  /** `http://127.0.0.1:<port>/hooks`. */
  readonly url: string
  readonly received: ReceivedWebhook[]
  /** Decides the answer of every request (default 200), after it is recorded. */
  answer: (request: ReceivedWebhook, index: number) => ReceiverAnswer
  /** `webhook-id` → number of requests that carried it. */
  countsById(): Map<string, number>
  /** Requests currently being handled (for "no two at once" checks). */
  readonly open: Map<string, number>
  /** The most requests with one `webhook-id` that were open at the same time. */
  maxConcurrentPerId(): number
  /** Answers every held request with this status. */
  release(status?: number): void
  close(): Promise<void>
}

/** A free loopback port (listen on 0, close): for a receiver that starts later ("connection refused" first). */
export async function freePort(): Promise<number> {
  const server = http.createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

/** A real `node:http` receiver on 127.0.0.1 that verifies every delivery with `standardwebhooks`. */
export async function startWebhookReceiver(secret: string, port = 0): Promise<WebhookReceiver> {
  const verifier = new Webhook(secret)
  const received: ReceivedWebhook[] = []
  const open = new Map<string, number>()
  const held: ((status: number) => void)[] = []
  let maxConcurrent = 0
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8')
      const id = String(req.headers['webhook-id'])
      open.set(id, (open.get(id) ?? 0) + 1)
      maxConcurrent = Math.max(maxConcurrent, open.get(id) ?? 0)
      let payload: unknown
      let verifyError: string | undefined
      try {
        payload = verifier.verify(body, req.headers as Record<string, string>)
      } catch (error) {
        verifyError = (error as Error).message
      }
      const request = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body,
        payload,
        verifyError,
      }
      received.push(request)
      const reply = (answer: Exclude<ReceiverAnswer, 'hold'>) => {
        open.set(id, (open.get(id) ?? 1) - 1)
        const status = typeof answer === 'number' ? answer : answer.status
        res.writeHead(status, typeof answer === 'number' ? {} : answer.headers).end('ok')
      }
      const answer = verifyError === undefined ? receiver.answer(request, received.length - 1) : 400
      if (answer === 'hold') held.push((status) => reply(status))
      else reply(answer)
    })
  })
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve))
  const bound = (server.address() as AddressInfo).port
  const receiver: WebhookReceiver = {
    port: bound,
    url: `http://127.0.0.1:${bound}/hooks`,
    received,
    answer: () => 200,
    open,
    countsById: () => {
      const counts = new Map<string, number>()
      for (const request of received) {
        const id = String(request.headers['webhook-id'])
        counts.set(id, (counts.get(id) ?? 0) + 1)
      }
      return counts
    },
    maxConcurrentPerId: () => maxConcurrent,
    release: (status = 200) => {
      for (const reply of held.splice(0)) reply(status)
    },
    close: async () => {
      for (const reply of held.splice(0)) reply(503)
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
  return receiver
}
