import type { MiddlewareHandler } from 'hono'
import { InterludeError } from '@interlude/protocol'

/**
 * The one "shutting down" flag of a server (docs/architecture.md, "Shutdown"): set by a graceful shutdown, read by
 * the gate below and by readiness (`isShuttingDown()`), which then answers 503.
 */
export class ShutdownState {
  #draining = false
  /** Ends, without a failure event, the streams still open once the runs were handed over. */
  readonly #streams = new AbortController()

  get draining(): boolean {
    return this.#draining
  }

  /** Aborted when open streams must end so their clients reconnect elsewhere (`Last-Event-ID`). */
  get streamsEnd(): AbortSignal {
    return this.#streams.signal
  }

  begin(): void {
    this.#draining = true
  }

  endStreams(): void {
    this.#streams.abort()
  }
}

/**
 * While draining, every request is refused with `503 SERVER_SHUTTING_DOWN` (retryable: another replica or the
 * restarted process answers it); readiness fails with it too. Streams already open are not affected.
 */
export function refuseWhileDraining(state: ShutdownState): MiddlewareHandler {
  return async function refuseWhileDraining(_c, next) {
    if (state.draining) throw new InterludeError('SERVER_SHUTTING_DOWN', 'The server is shutting down; retry.')
    await next()
  }
}
