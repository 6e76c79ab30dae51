import { clientError } from './errors.ts'
import type { RecoverResult } from './types.ts'

/** What a recovery is for: concurrent calls with the same key share one lookup. */
export interface RecoveryKey {
  readonly threadId: string
  readonly revision: number
}

interface Flight extends RecoveryKey {
  /** Aborts the shared lookup once every caller that passed a signal has aborted. */
  readonly controller: AbortController
  readonly promise: Promise<RecoverResult>
  waiting: number
}

/**
 * The recovery request shared by concurrent `recover()` calls for the same thread and revision:
 * React StrictMode runs a mount effect twice, and both calls must get the one lookup and restore
 * (a second restore would fail on a stale revision). Each caller's own signal rejects only its
 * own promise (`ABORTED`).
 */
export class SharedRecovery {
  #flight: Flight | undefined

  join(
    key: RecoveryKey,
    run: (signal: AbortSignal) => Promise<RecoverResult>,
    signal: AbortSignal | undefined,
  ): Promise<RecoverResult> {
    const current = this.#flight
    if (current && current.threadId === key.threadId && current.revision === key.revision)
      return follow(current, signal)
    const controller = new AbortController()
    const shared = async (): Promise<RecoverResult> => {
      try {
        return await run(controller.signal)
      } finally {
        if (this.#flight === flight) this.#flight = undefined
      }
    }
    const flight: Flight = { ...key, controller, promise: shared(), waiting: 0 }
    this.#flight = flight
    return follow(flight, signal)
  }
}

/** One caller's view of a shared flight: its own signal rejects only its own promise. */
function follow(flight: Flight, signal: AbortSignal | undefined): Promise<RecoverResult> {
  flight.waiting += 1
  if (!signal) return flight.promise
  return new Promise<RecoverResult>((resolve, reject) => {
    const onAbort = () => {
      flight.waiting -= 1
      if (flight.waiting === 0) flight.controller.abort()
      reject(clientError('ABORTED', 'The recovery was aborted.'))
    }
    if (signal.aborted) return onAbort()
    signal.addEventListener('abort', onAbort, { once: true })
    flight.promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort))
  })
}
