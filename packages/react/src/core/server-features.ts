import type { InterludeError } from '@interlude/protocol'
import { clientError } from './errors.ts'

/**
 * Which server the runtime talks to (docs/client-contract.md#plain-ag-ui-servers):
 * - `interlude`: Interlude's routes exist (reconnect from the thread log, `recover()`, explicit cancel);
 * - `plain`: only the AG-UI run endpoint exists, so none of those routes is called;
 * - `auto` (default): assume Interlude until one of its routes answers like a server without it
 *   (a 404, 405 or 501 without Interlude's JSON error envelope), then behave as `plain` for the
 *   rest of the runtime's life.
 */
export type ServerMode = 'interlude' | 'plain' | 'auto'

// Interlude answers even unknown routes with its envelope; these statuses without one mean "no such route".
const MISSING_ROUTE: readonly unknown[] = [404, 405, 501]

/** True for a 404, 405 or 501 without Interlude's error envelope (`no_envelope`) on a route Interlude always has. */
export function isMissingRoute(error: InterludeError): boolean {
  const details = error.details as { reason?: unknown; status?: unknown } | undefined
  return details?.reason === 'no_envelope' && MISSING_ROUTE.includes(details.status)
}

/** The detected features of one runtime's server. */
export class ServerFeatures {
  readonly #mode: () => ServerMode
  #plain = false

  constructor(mode: () => ServerMode) {
    this.#mode = mode
  }

  /** Whether Interlude's routes (events, snapshot, cancel) may be called. */
  get available(): boolean {
    const mode = this.#mode()
    return mode === 'interlude' || (mode === 'auto' && !this.#plain)
  }

  /** Records what a call of an Interlude route proved; true when it proved the route absent. */
  observe(error: unknown): boolean {
    if (this.#mode() !== 'auto' || !isInterludeLike(error) || !isMissingRoute(error)) return false
    this.#plain = true
    return true
  }

  /** Forgets the detection (a different transport or endpoint may be a different server). */
  reset(): void {
    this.#plain = false
  }
}

function isInterludeLike(error: unknown): error is InterludeError {
  return typeof error === 'object' && error !== null && 'code' in error
}

/** A stream cut after acknowledgement on a server that cannot replay it: a typed, final failure. */
export function streamCut(cause: InterludeError): InterludeError {
  const details = cause.details as { reason?: unknown } | undefined
  return clientError(
    cause.code,
    'The stream was cut and this server cannot replay it; the run may have gone on without this client.',
    { reason: 'stream_cut', cause: details?.reason ?? cause.code },
  )
}

/** `recover()` against a server without thread snapshots. */
export function noServerSnapshots(): InterludeError {
  return clientError('NOT_FOUND', 'This server has no thread snapshots (plain AG-UI); use acceptLocalHistory().', {
    reason: 'plain_server',
  })
}
