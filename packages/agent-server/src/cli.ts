import type { AgentDefinition } from './agent/agent.ts'
import { loadAgentModule } from './agent/load-agent-module.ts'
import type { CliOptions } from './cli-args.ts'
import { parseCliArgs, USAGE } from './cli-args.ts'
import { isPostgresUrl, startServer } from './server.ts'

/** The `interlude-server` entry (bin/interlude-server.js imports the built copy). */
export async function main(argv: readonly string[]): Promise<void> {
  let options: CliOptions | 'help'
  try {
    options = parseCliArgs(argv)
  } catch (error) {
    process.stderr.write(`interlude-server: ${error instanceof Error ? error.message : String(error)}\n\n${USAGE}`)
    process.exitCode = 2
    return
  }
  if (options === 'help') {
    process.stdout.write(USAGE)
    return
  }
  let agent: AgentDefinition | undefined
  if (options.agentModule !== undefined) {
    try {
      agent = await loadAgentModule(options.agentModule)
    } catch (error) {
      process.stderr.write(`interlude-server: ${error instanceof Error ? error.message : String(error)}\n`)
      process.exitCode = 2
      return
    }
  }
  const server = await startServer({
    ...(agent !== undefined ? { agent } : {}),
    port: options.port,
    host: options.host,
    ...(isPostgresUrl(options.db) ? { dbUrl: options.db } : { dbPath: options.db }),
    ...(options.dbSchema !== undefined ? { dbSchema: options.dbSchema } : {}),
    exclusive: options.exclusive,
    ...(options.runLeaseMs !== undefined ? { runLeaseMs: options.runLeaseMs } : {}),
    ...(options.pollMs !== undefined ? { pollMs: options.pollMs } : {}),
    model: options.model,
    interruptTtlSeconds: options.interruptTtlSeconds,
    ...(options.onExpiry !== undefined ? { onExpiry: options.onExpiry } : {}),
    pacingMs: options.pacingMs,
    basePath: options.basePath,
    ...(options.tokens ? { tokens: options.tokens } : {}),
    ...(options.staticDir !== undefined ? { staticDir: options.staticDir } : {}),
    approvers: options.approvers,
    // Each URL is signed with INTERLUDE_WEBHOOK_SECRET (checked by parseCliArgs).
    webhooks: options.webhooks.map((url) => ({ url })),
    ...(options.corsOrigins.length > 0 ? { cors: { origins: options.corsOrigins } } : {}),
    // issue 14: model bounds, tool-argument cap, token caps; each model call's usage is logged.
    openai: options.openai,
    ...(options.maxToolArgumentBytes !== undefined
      ? { limits: { maxToolArgumentBytes: options.maxToolArgumentBytes } }
      : {}),
    usage: {
      ...options.usage,
      onUsage: ({ threadId, runId, model, usage }) =>
        process.stdout.write(
          `usage thread=${threadId} run=${runId} model=${model} input=${usage.inputTokens} output=${usage.outputTokens}\n`,
        ),
    },
  })
  process.stdout.write(`listening on ${server.url}\n`)
  let stopping = false
  const stop = (signal: string) => {
    if (stopping) return
    stopping = true
    process.stdout.write(`${signal}: shutting down\n`)
    server.close().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error(error)
        process.exit(1)
      },
    )
  }
  process.once('SIGINT', () => stop('SIGINT'))
  process.once('SIGTERM', () => stop('SIGTERM'))
}

main(process.argv.slice(2)).catch((error: unknown) => {
  console.error('interlude-server failed to start:', error)
  process.exit(1)
})
