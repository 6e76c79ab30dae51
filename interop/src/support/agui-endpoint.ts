import type { AbstractAgent, BaseEvent, RunAgentInput } from '@ag-ui/client'
import { EventEncoder } from '@ag-ui/encoder'
import { readFile } from 'node:fs/promises'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { extname, join, normalize } from 'node:path'

/**
 * An AG-UI HTTP endpoint for agents of the bridges (`LangGraphAgent`, `MastraAgent`), as their docs serve them: POST
 * a `RunAgentInput`, get the agent's events as SSE (`@ag-ui/encoder`). A fresh agent per request, because the
 * bridges keep run state on the instance. CORS is open so a page on another port (the e2e suite) can call it.
 */
export type AgentFactory = () => AbstractAgent

export interface Route {
  readonly agent: AgentFactory
}

function cors(res: ServerResponse): void {
  res.setHeader('Access-Control-Allow-Origin', '*')
  res.setHeader('Access-Control-Allow-Headers', '*')
  res.setHeader('Access-Control-Allow-Methods', 'POST, GET, OPTIONS')
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  let body = ''
  for await (const chunk of req) body += String(chunk)
  return JSON.parse(body) as unknown
}

async function run(agent: AbstractAgent, input: RunAgentInput, res: ServerResponse): Promise<void> {
  const encoder = new EventEncoder()
  res.writeHead(200, { 'Content-Type': encoder.getContentType(), 'Cache-Control': 'no-cache' })
  await new Promise<void>((resolve) => {
    agent.run(input).subscribe({
      next: (event: BaseEvent) => void res.write(encoder.encodeSSE(event)),
      // What a bridge's own server does with an error: a RUN_ERROR event, then the end of the stream.
      error: (error: unknown) => {
        const message = error instanceof Error ? error.message : String(error)
        res.write(encoder.encodeSSE({ type: 'RUN_ERROR', message } as BaseEvent))
        resolve()
      },
      complete: resolve,
    })
  })
  res.end()
}

const TYPES: Record<string, string> = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css' }

/** A file of the built page (`GET /` is its `index.html`); a bare 404 for anything else. */
async function servePage(dir: string, path: string, res: ServerResponse): Promise<void> {
  const file = normalize(join(dir, path === '/' ? 'index.html' : path))
  if (!file.startsWith(dir)) return void res.writeHead(404).end()
  try {
    const body = await readFile(file)
    res.writeHead(200, { 'Content-Type': TYPES[extname(file)] ?? 'application/octet-stream' }).end(body)
  } catch {
    res.writeHead(404).end('Not Found')
  }
}

export interface ServeOptions {
  /** GET paths answered with JSON (what a server did, for assertions). */
  readonly views?: Readonly<Record<string, () => unknown>>
  /** A built page served at `/` and its assets (the e2e suite's `useChat` app). */
  readonly pageDir?: string
}

/** Serves each route at its path on 127.0.0.1 (a free port). */
export async function serveAgents(
  routes: Readonly<Record<string, Route>>,
  { views = {}, pageDir }: ServeOptions = {},
): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    cors(res)
    const path = new URL(req.url ?? '/', 'http://x').pathname
    const route = routes[path]
    const view = views[path]
    if (req.method === 'OPTIONS') return void res.writeHead(204).end()
    if (req.method === 'GET' && view) {
      return void res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(view()))
    }
    if (req.method === 'GET' && pageDir !== undefined) return void servePage(pageDir, path, res)
    if (req.method !== 'POST' || !route) return void res.writeHead(404).end('Not Found')
    readJson(req)
      .then((input) => run(route.agent(), input as RunAgentInput, res))
      .catch(() => res.destroy())
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }
}
