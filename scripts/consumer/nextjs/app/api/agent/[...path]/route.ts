import type { AgentServer } from '@interlude/agent-server'
import { anonymousSessionCookie, createAgentServer, createPostgresStore } from '@interlude/agent-server'
import { releaseAssistant } from '@interlude/agent-server/demo'

// The agent server inside a route handler: Node.js runtime, never prerendered or cached.
export const runtime = 'nodejs'
export const dynamic = 'force-dynamic'

// Made on the first request, not at import: `next build` imports this module, and must not open (let alone migrate)
// a database. One server per process, shared by every request.
let server: Promise<AgentServer> | undefined
function agentServer(): Promise<AgentServer> {
  server ??= (async () => {
    const store = await createPostgresStore({
      connectionString: process.env.DATABASE_URL ?? 'postgres://127.0.0.1:5432/postgres',
      schema: process.env.INTERLUDE_DB_SCHEMA ?? 'interlude',
    })
    const app = createAgentServer({
      agent: releaseAssistant({ pacingMs: 0 }),
      store,
      basePath: '/api/agent',
      authenticate: anonymousSessionCookie({ secret: process.env.INTERLUDE_SESSION_SECRET ?? '' }),
    })
    await app.ready()
    return app
  })()
  return server
}

async function handle(request: Request): Promise<Response> {
  return (await agentServer()).fetch(request)
}

export { handle as DELETE, handle as GET, handle as OPTIONS, handle as POST }
