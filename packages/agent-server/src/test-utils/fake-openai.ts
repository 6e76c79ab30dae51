import http from 'node:http'
import type { AddressInfo } from 'node:net'

/**
 * A local OpenAI-compatible chat-completions server for tests driven through the real `openai`
 * client: each request is answered by the next queued handler (streamed `chat.completion.chunk`
 * frames, scripted failures). Only the model's answers are scripted.
 */
export type FakeHandler = (req: http.IncomingMessage, res: http.ServerResponse, body: Record<string, unknown>) => void

export interface FakeOpenAI {
  readonly baseURL: string
  /** Handlers for the next requests, in order (a request without one gets a 500). */
  readonly queue: FakeHandler[]
  /** Every request body received, in order. */
  readonly requests: Record<string, unknown>[]
  /** Requests whose connection the client closed before the response ended (an abort). */
  readonly aborted: number
  /** Resolves at the next client abort. */
  nextAbort(): Promise<void>
  /** Resolves when `n` requests have arrived. */
  received(n: number): Promise<void>
  reset(): void
  close(): Promise<void>
}

export function chunk(delta: Record<string, unknown>, finish: string | null = null, extra: object = {}): string {
  return `data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 0, model: 'fake-model', choices: [{ index: 0, delta, finish_reason: finish }], ...extra })}\n\n`
}

/** The final usage frame of `stream_options.include_usage` (no choices). */
export function usageChunk(prompt: number, completion: number): string {
  return `data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 0, model: 'fake-model', choices: [], usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion } })}\n\n`
}

export function streamOf(frames: string[], options: { drop?: boolean } = {}): FakeHandler {
  return (_req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/event-stream' })
    for (const f of frames) res.write(f)
    if (options.drop) {
      // Kill the connection mid-stream, without a final chunk.
      setTimeout(() => res.socket?.destroy(), 10)
      return
    }
    res.end('data: [DONE]\n\n')
  }
}

/** An HTTP error with an OpenAI-style error body. */
export function errorOf(status: number, body: object, headers: Record<string, string> = {}): FakeHandler {
  return (_req, res) => {
    res.writeHead(status, { 'Content-Type': 'application/json', ...headers })
    res.end(JSON.stringify(body))
  }
}

export async function startFakeOpenAI(): Promise<FakeOpenAI> {
  const queue: FakeHandler[] = []
  const requests: Record<string, unknown>[] = []
  let aborted = 0
  let abortWaiters: (() => void)[] = []
  let countWaiters: { n: number; resolve: () => void }[] = []
  const server = http.createServer((req, res) => {
    let raw = ''
    req.on('data', (c: Buffer) => (raw += c.toString('utf8')))
    req.on('end', () => {
      const body = JSON.parse(raw) as Record<string, unknown>
      requests.push(body)
      countWaiters = countWaiters.filter((w) => (requests.length >= w.n ? (w.resolve(), false) : true))
      res.on('close', () => {
        if (res.writableFinished) return
        aborted++
        const waiters = abortWaiters
        abortWaiters = []
        for (const w of waiters) w()
      })
      const handler = queue.shift()
      if (!handler) {
        res.writeHead(500).end('no handler queued')
        return
      }
      handler(req, res, body)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    queue,
    requests,
    get aborted() {
      return aborted
    },
    nextAbort: () => new Promise<void>((resolve) => abortWaiters.push(resolve)),
    received: (n) =>
      new Promise<void>((resolve) => {
        if (requests.length >= n) resolve()
        else countWaiters.push({ n, resolve })
      }),
    reset() {
      queue.length = 0
      requests.length = 0
      aborted = 0
    },
    async close() {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
