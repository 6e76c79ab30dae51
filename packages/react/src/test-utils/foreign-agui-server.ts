/**
 * A minimal foreign AG-UI 1.0 server for tests: `node:http` + `@ag-ui/encoder`, nothing of
 * Interlude's. POST only at one path (`/awp`), no SSE ids (unless `ids` is set), a zone-less
 * `expiresAt`, no thread log, no snapshot, no cancel route: every other request is a bare 404.
 *
 * Script, by the last user message: `approve …` pauses on a `deploy` tool call; a `resume`
 * continues the turn. `cut` in the text (or `cutResume` for resumed runs) drops the connection
 * after some text; `hang` streams some text and then waits until the client goes away.
 */
import { EventEncoder } from '@ag-ui/encoder'
import type { RunAgentInput } from '@interlude/protocol'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface ForeignServer {
  readonly baseUrl: string
  /** `METHOD /path` of every request received. */
  readonly requests: string[]
  /** Bodies of the POSTs to the run path. */
  readonly inputs: RunAgentInput[]
  /** Drop the connection of resumed runs after their first text. */
  cutResume: boolean
  /** Resolves when a `hang` run's client has gone away. */
  hangClosed: Promise<void>
  close(): Promise<void>
}

export interface ForeignServerOptions {
  readonly path?: string
  /** Send SSE `id:` lines (a foreign server with ids but without Interlude's event log). */
  readonly ids?: boolean
}

export const LOOSE_EXPIRES_AT = '2099-12-31T23:59:59'

export async function startForeignServer(options: ForeignServerOptions = {}): Promise<ForeignServer> {
  const path = options.path ?? '/awp'
  const encoder = new EventEncoder()
  let closedHang: () => void = () => undefined
  let seq = 0
  const state: ForeignServer = {
    baseUrl: '',
    requests: [],
    inputs: [],
    cutResume: false,
    hangClosed: new Promise<void>((resolve) => (closedHang = resolve)),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    state.requests.push(`${req.method} ${req.url}`)
    if (req.url !== path) return void res.writeHead(404, { 'Content-Type': 'text/plain' }).end('Not Found')
    if (req.method !== 'POST') return void res.writeHead(405, { Allow: 'POST' }).end()
    let body = ''
    for await (const chunk of req) body += String(chunk)
    const input = JSON.parse(body) as RunAgentInput
    state.inputs.push(input)
    res.writeHead(200, { 'Content-Type': encoder.getContentType(), 'Cache-Control': 'no-cache' })
    const send = (event: Record<string, unknown>) =>
      res.write(
        `${options.ids ? `id: ${++seq}\n` : ''}${encoder.encodeSSE(event as unknown as Parameters<EventEncoder['encodeSSE']>[0])}`,
      )
    // Drops the connection once what was written has left (destroy() would discard pending writes).
    const cut = () => void res.write('', () => res.destroy())
    const { threadId, runId } = input
    const last = [...input.messages].reverse().find((m) => m.role === 'user')
    const text = typeof last?.content === 'string' ? last.content : ''
    const say = (messageId: string, delta: string) => {
      send({ type: 'TEXT_MESSAGE_START', messageId, role: 'assistant' })
      send({ type: 'TEXT_MESSAGE_CONTENT', messageId, delta })
      send({ type: 'TEXT_MESSAGE_END', messageId })
    }
    send({ type: 'RUN_STARTED', threadId, runId })
    if (input.resume) {
      const approved = (input.resume[0]?.payload as { approved?: boolean } | undefined)?.approved === true
      if (state.cutResume) {
        send({ type: 'TEXT_MESSAGE_START', messageId: `m-${runId}`, role: 'assistant' })
        send({ type: 'TEXT_MESSAGE_CONTENT', messageId: `m-${runId}`, delta: 'Deploying' })
        return cut()
      }
      say(`m-${runId}`, approved ? 'Deployed.' : 'Not deployed.')
      send({ type: 'RUN_FINISHED', threadId, runId, outcome: { type: 'success' } })
      return void res.end()
    }
    if (text.startsWith('approve')) {
      const toolCallId = `call-${runId}`
      send({ type: 'TOOL_CALL_START', toolCallId, toolCallName: 'deploy', parentMessageId: `a-${runId}` })
      send({ type: 'TOOL_CALL_ARGS', toolCallId, delta: '{"env":"prod"}' })
      send({ type: 'TOOL_CALL_END', toolCallId })
      const interrupt = { id: `int-${runId}`, reason: 'tool_call', toolCallId, expiresAt: LOOSE_EXPIRES_AT }
      send({ type: 'RUN_FINISHED', threadId, runId, outcome: { type: 'interrupt', interrupts: [interrupt] } })
      return void res.end()
    }
    if (text.includes('cut')) {
      send({ type: 'TEXT_MESSAGE_START', messageId: `m-${runId}`, role: 'assistant' })
      send({ type: 'TEXT_MESSAGE_CONTENT', messageId: `m-${runId}`, delta: 'Half an ans' })
      return cut()
    }
    if (text.includes('hang')) {
      send({ type: 'TEXT_MESSAGE_START', messageId: `m-${runId}`, role: 'assistant' })
      send({ type: 'TEXT_MESSAGE_CONTENT', messageId: `m-${runId}`, delta: 'Thinking' })
      res.on('close', () => closedHang())
      return
    }
    say(`m-${runId}`, `You said: ${text}`)
    send({ type: 'RUN_FINISHED', threadId, runId })
    res.end()
  }

  const server = createServer((req, res) => {
    handle(req, res).catch(() => res.destroy())
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  Object.assign(state, { baseUrl: `http://127.0.0.1:${port}` })
  return state
}
