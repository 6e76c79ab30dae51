import type { ErrorCode } from '@interlude/protocol'
import { InterludeError, isErrorCode } from '@interlude/protocol'

/** Client-side errors. Short sentences: apps switch on `code`, tests match on it. */
export function clientError(code: ErrorCode, message: string, details?: unknown): InterludeError {
  return new InterludeError(code, message, details === undefined ? {} : { details })
}

const SERVER_FAILURE = Symbol.for('@interlude/react/server-failure')

/** A `RUN_ERROR` the server reported inside the stream: never retried, never healed by reconnecting. */
export function runError(event: { message?: unknown; code?: unknown }): InterludeError {
  const code: ErrorCode = isErrorCode(event.code) ? event.code : 'RUN_FAILED'
  const message = typeof event.message === 'string' && event.message !== '' ? event.message : 'The run failed.'
  const error = new InterludeError(code, message, { details: { rawCode: event.code } })
  Object.defineProperty(error, SERVER_FAILURE, { value: true })
  return error
}

export function isRunError(error: InterludeError): boolean {
  return (error as unknown as Record<symbol, unknown>)[SERVER_FAILURE] === true
}

export function protocolViolation(message: string): InterludeError {
  return new InterludeError('PROTOCOL_ERROR', message, { details: { reason: 'invalid_event' } })
}

export function toInterludeError(error: unknown): InterludeError {
  if (InterludeError.isInstance(error)) return error
  if (error instanceof DOMException && error.name === 'AbortError') return new InterludeError('ABORTED', 'The request was aborted.', { cause: error })
  return new InterludeError('NETWORK_ERROR', 'The request failed.', { cause: error })
}
