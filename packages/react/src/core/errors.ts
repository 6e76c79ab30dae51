import type { ErrorCode } from '@interlude/protocol'
import { InterludeError, isErrorCode } from '@interlude/protocol'

/** Client-side errors. Short sentences: apps switch on `code`, tests match on it. */
export function clientError(code: ErrorCode, message: string, details?: unknown): InterludeError {
  return new InterludeError(code, message, details === undefined ? {} : { details })
}

// Marks errors that neither a retry nor a reconnect can heal: a server-reported RUN_ERROR, or a
// stream this client refuses (events out of order, ids that do not match the run).
const FATAL = Symbol.for('@interlude/react/fatal')

function fatal(error: InterludeError): InterludeError {
  Object.defineProperty(error, FATAL, { value: true })
  return error
}

/** A `RUN_ERROR` the server reported inside the stream: never retried, never healed by reconnecting. */
export function runError(event: { message?: unknown; code?: unknown; details?: unknown }): InterludeError {
  const code: ErrorCode = isErrorCode(event.code) ? event.code : 'RUN_FAILED'
  const message = typeof event.message === 'string' && event.message !== '' ? event.message : 'The run failed.'
  // The server's typed details (a model error's kind and retryability, a usage cap) stay readable.
  const own = typeof event.details === 'object' && event.details !== null ? (event.details as object) : {}
  return fatal(new InterludeError(code, message, { details: { ...own, rawCode: event.code } }))
}

export function isFatal(error: InterludeError): boolean {
  return (error as unknown as Record<symbol, unknown>)[FATAL] === true
}

/** The stream broke the run lifecycle (AG-UI ordering, mismatched ids): fatal. */
export function protocolViolation(message: string): InterludeError {
  return fatal(new InterludeError('PROTOCOL_ERROR', message, { details: { reason: 'invalid_event' } }))
}
