import type { AgentDefinition } from './agent/agent.ts'
import { loadAgentModule } from './agent/load-agent-module.ts'
import type { CliOptions } from './cli-args.ts'
import { parseCliArgs, USAGE } from './cli-args.ts'
import { isWorker, onSupervisorShutdown, reportListening, superviseWorkers, workerId } from './cli-workers.ts'
import { isPostgresUrl, startServer } from './server.ts'
import { SqliteLockedError } from './store/sqlite/process-lock.ts'

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
  // `--workers N`: this process only supervises N copies of itself (cli-workers.ts).
  if (options.workers > 1 && !isWorker()) {
    superviseWorkers({ workers: options.workers })
    return
  }
  // Startup warnings once per set of workers, not once per worker.
  const quiet = isWorker() && workerId() !== 1
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
    dbPool: options.dbPool,
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
    logLevel: options.logLevel,
    metricsPrincipals: options.metricsPrincipals,
    ...(options.metricsPort !== undefined
      ? { metricsPort: options.metricsPort, metricsHost: options.metricsHost }
      : {}),
    ...(options.shutdownGraceMs !== undefined ? { shutdownGraceMs: options.shutdownGraceMs } : {}),
    ...(options.admissionTurns ? {} : { admissionTurns: false as const }),
    limits: {
      ...options.limits,
      ...(options.maxToolArgumentBytes !== undefined ? { maxToolArgumentBytes: options.maxToolArgumentBytes } : {}),
    },
    ...(options.sessionMaxAgeSeconds !== undefined ? { sessionMaxAgeSeconds: options.sessionMaxAgeSeconds } : {}),
    secureCookies: options.secureCookies,
    trustProxy: options.trustProxy,
    // issue 14: model bounds and token caps (usage is stored per run: GET …/runs/:runId).
    openai: options.openai,
    usage: options.usage,
    ...(quiet ? { warn: () => undefined } : {}),
  })
  if (options.tokensOnCommandLine && !quiet)
    process.stderr.write('interlude-server: warning: --token secrets are visible in ps; prefer --tokens-file.\n')
  if (isWorker()) reportListening(server.url)
  else process.stdout.write(`listening on ${server.url}\n`)
  // docs/architecture.md, "Shutdown": the first SIGTERM/SIGINT drains (503 for new requests, running turns finish
  // within the grace period, the rest are handed over with their leases); a second one exits at once. A worker
  // also drains when its supervisor asks (a terminal's Ctrl-C reaches both: that is one request, not two).
  let stopping = false
  const stop = (signal: string, fromSupervisor = false) => {
    if (stopping) {
      if (fromSupervisor) return
      process.stdout.write(`${signal} again: exiting now\n`)
      process.exit(1)
    }
    stopping = true
    const who = isWorker() ? `worker ${process.pid}: ` : ''
    process.stdout.write(`${who}${signal}: shutting down\n`)
    server.shutdown(options.shutdownGraceMs).then(
      (handedOver) => {
        process.stdout.write(`${who}stopped; ${handedOver} run(s) handed over\n`)
        process.exit(0)
      },
      (error: unknown) => {
        console.error(error)
        process.exit(1)
      },
    )
  }
  // Node passes the signal's number as a second argument: not the `fromSupervisor` flag.
  process.on('SIGINT', (signal) => stop(signal))
  process.on('SIGTERM', (signal) => stop(signal))
  if (isWorker()) onSupervisorShutdown((reason) => stop(reason, true))
}

main(process.argv.slice(2)).catch((error: unknown) => {
  // A second process on an exclusive SQLite file: the message says what to do; a stack would only hide it.
  if (error instanceof SqliteLockedError) process.stderr.write(`interlude-server: ${error.message}\n`)
  else console.error('interlude-server failed to start:', error)
  process.exit(1)
})
