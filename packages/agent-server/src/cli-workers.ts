import cluster from 'node:cluster'
import type { Worker } from 'node:cluster'

/**
 * `interlude-server --workers N` (README "Several processes"): this process becomes a supervisor that forks N copies
 * of itself with the same arguments (Node's cluster module). The workers share the listening port (the supervisor
 * accepts and hands connections round-robin) and are replicas of one another on the shared store, exactly like
 * separately started servers: admission races between them are decided by the store's conditional writes, a worker
 * that dies has its runs continued by the others once their leases end.
 *
 * The workers start one after another (the first creates and migrates the store). Signals: the first SIGTERM/SIGINT asks every worker to shut down gracefully (each drains as a single server does)
 * and the supervisor exits once all have; a second one makes them exit at once. A worker that dies on its own is
 * replaced; one that fails before it ever listened stops the whole set (a bad flag or an unreachable database would
 * only fail again).
 */

/** Messages between supervisor and workers (over the cluster IPC channel). */
export type WorkerMessage =
  { readonly type: 'interlude:listening'; readonly url: string } | { readonly type: 'interlude:shutdown' }

export function isWorkerMessage(value: unknown): value is WorkerMessage {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { type?: unknown }).type === 'string' &&
    (value as { type: string }).type.startsWith('interlude:')
  )
}

/** In a worker: whether this process runs under a `--workers` supervisor. */
export const isWorker = (): boolean => cluster.isWorker

/** In a worker: its number in the set (1 for the first; a replacement gets the next free number). */
export const workerId = (): number | undefined => cluster.worker?.id

/** In a worker: tells the supervisor the URL it listens on (the supervisor prints `listening on` once for all). */
export function reportListening(url: string): void {
  const message: WorkerMessage = { type: 'interlude:listening', url }
  process.send?.(message)
}

/**
 * In a worker: the supervisor's shutdown request, and its disappearance (a killed supervisor must not leave orphans
 * serving on), call `stop` like a first signal would.
 */
export function onSupervisorShutdown(stop: (reason: string) => void): void {
  process.on('message', (message: unknown) => {
    if (isWorkerMessage(message) && message.type === 'interlude:shutdown') stop('supervisor')
  })
  process.on('disconnect', () => stop('supervisor gone'))
  // Gone while this worker was still starting.
  if (!process.connected) stop('supervisor gone')
}

export interface SuperviseOptions {
  readonly workers: number
  readonly out?: (line: string) => void
  readonly err?: (line: string) => void
}

/** In the supervisor: forks the workers and runs until they have all exited after a signal. */
export function superviseWorkers(options: SuperviseOptions): void {
  const out = options.out ?? ((line: string) => process.stdout.write(`${line}\n`))
  const err = options.err ?? ((line: string) => process.stderr.write(`interlude-server: ${line}\n`))
  const listening = new Map<Worker, string>()
  let announced = false
  let stopping = false
  let failed = false

  const send = (worker: Worker, message: WorkerMessage) => {
    if (worker.isConnected()) worker.send(message)
  }
  const live = () => Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined)

  const fork = () => {
    const worker = cluster.fork()
    worker.on('message', (message: unknown) => {
      if (!isWorkerMessage(message) || message.type !== 'interlude:listening') return
      listening.set(worker, message.url)
      // Asked to stop while it was starting: it listens now, so it can drain.
      if (stopping) return send(worker, { type: 'interlude:shutdown' })
      // One at a time until all listen: the first creates and migrates the store, the others find it ready.
      if (!announced && live().length < options.workers) return fork()
      if (!announced && listening.size === options.workers) {
        announced = true
        out(
          `${options.workers} workers: pid ${live()
            .map((w) => w.process.pid)
            .join(', ')}`,
        )
        out(`listening on ${message.url}`)
      } else if (announced) {
        out(`worker ${worker.process.pid} listening`)
      }
    })
    worker.once('exit', (code, signal) => {
      const wasListening = listening.delete(worker)
      if (stopping) {
        if (code !== 0) failed = true
        if (live().length === 0) process.exit(failed ? 1 : 0)
        return
      }
      err(`worker ${worker.process.pid} exited (${signal ?? `code ${code}`})`)
      if (!wasListening) {
        // Failed before serving: the others would fail the same way.
        failed = true
        shutdown()
        return
      }
      fork()
    })
  }

  const shutdown = () => {
    stopping = true
    const workers = live()
    if (workers.length === 0) process.exit(failed ? 1 : 0)
    for (const worker of workers) send(worker, { type: 'interlude:shutdown' })
  }

  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      out(`${signal} again: exiting now`)
      // A signal reaches a worker at once (a message might not leave before this process exits): to a draining
      // worker it is the second one, so it exits at once too.
      for (const worker of live()) worker.process.kill('SIGTERM')
      process.exit(1)
    }
    out(`${signal}: shutting down ${live().length} workers`)
    shutdown()
  }
  process.on('SIGINT', onSignal)
  process.on('SIGTERM', onSignal)
  fork()
}
