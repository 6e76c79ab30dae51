import type { ServerParts } from './server-parts.ts'

/**
 * How a server stops (docs/architecture.md, "Shutdown"): at once (`close()`: running turns are cancelled and end with
 * their terminal events), or gracefully (`shutdown(graceMs)`: new requests are refused, running turns get `graceMs`
 * to finish and the rest are handed over with their leases, never cancelled).
 */
export type StopMode = { readonly graceful: false } | { readonly graceful: true; readonly graceMs: number }

interface StopStep {
  readonly name: string
  /** May answer how many running turns it handed over. */
  readonly stop: (parts: ServerParts, mode: StopMode) => unknown
}

/**
 * The one order in which a server stops, for both modes. Each step runs after the one before it has finished; a step
 * that does not apply to a mode does nothing in it.
 */
export const STOP_STEPS: readonly StopStep[] = [
  { name: 'refuse new requests', stop: (p, mode) => mode.graceful && p.draining.begin() },
  // No takeovers of other replicas' runs and no new decisions while this process stops.
  { name: 'recovery sweep', stop: (p) => p.recovery.stop() },
  { name: 'expiry sweep', stop: (p) => p.expirySweeper.stop() },
  { name: 'policy sweep', stop: (p) => p.policySweeper.stop() },
  // Runs held for a burst's admissions start now: a grace period counts from here, not from maxRunDelayMs.
  { name: 'admission turns', stop: (p) => p.turns?.release() },
  {
    name: 'runs',
    stop: async (p, mode) => (mode.graceful ? p.runs.drain(mode.graceMs) : p.runs.shutdown()),
  },
  // The turns handed over are continued elsewhere: their clients reconnect with Last-Event-ID.
  { name: 'run streams', stop: (p, mode) => mode.graceful && p.draining.endStreams() },
  { name: 'live tails', stop: (p) => p.closing.abort() },
  { name: 'log poll', stop: (p) => p.watcher.stop() },
  { name: 'change feed', stop: (p) => p.feed.stop() },
  // Before the store closes: in-flight deliveries finish (or stay locked, to be sent again after a restart).
  { name: 'webhook sender', stop: (p) => p.sender?.stop() },
  { name: 'store', stop: (p) => p.store.close() },
]

/** Stops the parts in `STOP_STEPS` order; answers how many running turns were handed over. */
export async function stopInOrder(parts: ServerParts, mode: StopMode): Promise<number> {
  let handedOver = 0
  for (const step of STOP_STEPS) {
    const answer = await step.stop(parts, mode)
    if (typeof answer === 'number') handedOver += answer
  }
  return handedOver
}

/** Starts the parts, in order (`ready()`: every request awaits it). */
export async function startInOrder(parts: ServerParts): Promise<void> {
  const { feed, watcher, recovery, sender, expirySweeper, policySweeper, runs, config } = parts
  feed.start()
  watcher.start()
  await recovery.startup()
  // After startup recovery, whose `run.failed` rows it then sends with everything the outbox still holds.
  sender?.start()
  // Often enough that a run whose lease ended (or was released by a graceful shutdown) is continued soon.
  recovery.startSweeping(Math.max(50, Math.min(config.pollMs * 4, Math.floor(runs.leaseMs / 2))))
  expirySweeper.start()
  policySweeper.start()
}
