import type { AgentDefinition } from './agent/agent.ts'
import { loadAgentModule } from './agent/load-agent-module.ts'
import type { CliOptions } from './cli-args.ts'
import { parseCliArgs, USAGE } from './cli-args.ts'
import { isWorker, onSupervisorShutdown, reportListening, superviseWorkers, workerId } from './cli-workers.ts'
import { isPostgresUrl, startServer } from './server.ts'
import { SetupError } from './store/optional-peer.ts'
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
  // The CLI's own options; the rest are startServer's under the same names.
  const {
    db,
    webhooks,
    admissionTurns,
    corsOrigins,
    tokensOnCommandLine,
    workers: _,
    agentModule: __,
    ...settings
  } = options
  const server = await startServer({
    ...settings,
    agent,
    dbUrl: isPostgresUrl(db) ? db : undefined,
    dbPath: isPostgresUrl(db) ? undefined : db,
    // Each URL is signed with INTERLUDE_WEBHOOK_SECRET (checked by parseCliArgs).
    webhooks: webhooks.map((url) => ({ url })),
    cors: corsOrigins.length > 0 ? { origins: corsOrigins } : undefined,
    admissionTurns: admissionTurns ? undefined : false,
    warn: quiet ? () => undefined : undefined,
  })
  if (tokensOnCommandLine && !quiet)
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
  // A second process on an exclusive SQLite file, a missing peer or key: the message says what to do; a stack would
  // only hide it.
  if (error instanceof SqliteLockedError || error instanceof SetupError)
    process.stderr.write(`interlude-server: ${error.message}\n`)
  else console.error('interlude-server failed to start:', error)
  process.exit(1)
})
