/**
 * The LangGraph stack of the interop suite, run as a child (`node --import tsx`, which the LangGraph API server needs
 * to import graphs written in TypeScript): the LangGraph API server (`startServer` of `@langchain/langgraph-api`,
 * in-memory, its files in a temporary folder) with two graphs, `@ag-ui/langgraph`'s `LangGraphAgent` in each interrupt
 * configuration behind an AG-UI endpoint, and the CopilotKit runtime in front of the bridge. Prints one JSON line with
 * the three base URLs, then serves until it is killed. With `INTEROP_PAGE_DIR` the AG-UI endpoint also serves that
 * built page at `/`.
 */
import { LangGraphAgent } from '@ag-ui/langgraph'
import { CopilotRuntime, createCopilotRuntimeHandler } from '@copilotkit/runtime/v2'
import { createCopilotNodeHandler } from '@copilotkit/runtime/v2/node'
import { startServer } from '@langchain/langgraph-api/server'
import { mkdtempSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { serveAgents, type Route } from '../support/agui-endpoint.ts'
import { READY } from '../support/ready.ts'
import { LANGGRAPH_CONFIGS, type LangGraphConfig } from './configs.ts'

const here = dirname(fileURLToPath(import.meta.url))
const { host } = await startServer({
  port: 0,
  nWorkers: 2,
  host: '127.0.0.1',
  cwd: mkdtempSync(join(tmpdir(), 'interlude-langgraph-')),
  graphs: {
    approval: join(here, 'node-interrupt-graph.ts:graph'),
    hitl: join(here, 'hitl-agent-graph.ts:agent'),
  },
})
const langgraph = `http://${host}`

const bridge = (graphId: string, config: LangGraphConfig) => () =>
  new LangGraphAgent({ deploymentUrl: langgraph, graphId, ...LANGGRAPH_CONFIGS[config] })

const routes: Record<string, Route> = {}
for (const graphId of ['approval', 'hitl']) {
  for (const config of Object.keys(LANGGRAPH_CONFIGS) as LangGraphConfig[]) {
    routes[`/${graphId}/${config}`] = { agent: bridge(graphId, config) }
  }
}
// INTEROP_PAGE_DIR: the built e2e page, served beside the routes (same origin).
const pageDir = process.env.INTEROP_PAGE_DIR
const agui = await serveAgents(routes, pageDir === undefined ? {} : { pageDir })

// The CopilotKit runtime (v2, multi-route: POST /agent/:agentId/run) in front of the bridge's default configuration.
// The runtime pins `@ag-ui/client` 0.0.59 while the bridge here runs on 1.0.0: one class at runtime, two in the types.
type RuntimeAgents = ConstructorParameters<typeof CopilotRuntime>[0]['agents']
const runtime = new CopilotRuntime({
  agents: { approval: bridge('approval', 'legacy')(), hitl: bridge('hitl', 'legacy')() } as unknown as RuntimeAgents,
})
const copilot = createServer(
  createCopilotNodeHandler(createCopilotRuntimeHandler({ runtime, basePath: '/copilotkit', cors: true })),
)
await new Promise<void>((resolve) => copilot.listen(0, '127.0.0.1', resolve))
const copilotkit = `http://127.0.0.1:${(copilot.address() as AddressInfo).port}/copilotkit`

process.stdout.write(`${READY} ${JSON.stringify({ langgraph, agui: agui.url, copilotkit })}\n`)
