import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { ToolDefinition } from '../src/agent/tool.ts'
import { bearerTokens } from '../src/auth/authenticate.ts'
import { NO_PRINCIPAL_QUOTAS } from '../src/config/limits.ts'
import { createAgentServer } from '../src/http/app.ts'
import { scriptedModel } from '../src/models/scripted.ts'
import { createLogger } from '../src/observability/logger.ts'
import { createSqliteStore } from '../src/store/sqlite/sqlite-store.ts'

/** A bench server whose scripted model calls the tool the user message names, then answers `done`. */
export interface CommandBenchApp {
  /** `POST {base}/runs` as alice; the SSE text of a 200, anything else throws. */
  post(body: unknown): Promise<string>
  /** A `RunAgentInput` for the thread with a fresh run id. */
  input(threadId: string, extra: Record<string, unknown>): Record<string, unknown>
  /** A new thread whose one user message names `tool`: the text of its run. */
  ask(threadId: string, tool: string): Promise<string>
  close(): Promise<void>
}

/** In process (`app.request`) on a SQLite file in a temporary folder, quotas off, logs silent. */
export async function startCommandBenchApp(name: string, tools: ToolDefinition[]): Promise<CommandBenchApp> {
  const dir = mkdtempSync(join(tmpdir(), `interlude-${name}-bench-`))
  const store = createSqliteStore(join(dir, 'bench.db'))
  const app = createAgentServer({
    agent: {
      model: scriptedModel((request) => {
        const last = request.messages[request.messages.length - 1]
        if (last?.role === 'tool') return { text: 'done' }
        return { toolCalls: [{ name: String(last?.content), args: {} }] }
      }),
      tools,
    },
    store,
    authenticate: bearerTokens({ alice: 'alice-bench-token' }),
    limits: NO_PRINCIPAL_QUOTAS,
    logError: () => undefined,
    logger: createLogger({ level: 'silent' }),
  })
  await app.ready()
  const post = async (body: unknown): Promise<string> => {
    const response = await app.request(`http://localhost${app.basePath}/runs`, {
      method: 'POST',
      headers: { Authorization: 'Bearer alice-bench-token', 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    })
    const text = await response.text()
    if (response.status !== 200) throw new Error(`${response.status}: ${text}`)
    return text
  }
  const input = (threadId: string, extra: Record<string, unknown>) => ({
    threadId,
    runId: `run_${randomUUID()}`,
    tools: [],
    context: [],
    state: {},
    forwardedProps: {},
    messages: [],
    ...extra,
  })
  return {
    post,
    input,
    ask: (threadId, tool) =>
      post(input(threadId, { messages: [{ id: `u_${randomUUID()}`, role: 'user', content: tool }] })),
    close: async () => {
      await app.close()
      await store.close()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
