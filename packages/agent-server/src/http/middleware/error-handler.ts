import type { Context, ErrorHandler, NotFoundHandler } from 'hono'
import { InterludeError } from '@interlude/protocol'
import { retryAfterOf } from './rate-limited.ts'

/** `Retry-After` (seconds) of `503 STORE_UNAVAILABLE`. */
export const STORE_RETRY_AFTER_S = 5

/**
 * The single error mapping: an `InterludeError` becomes `c.json(err.toEnvelope(), err.status)`;
 * anything else becomes `INTERNAL` with a generic message (the raw error only goes to the log).
 */
export function errorHandler(logError: (message: string, error: unknown) => void): ErrorHandler {
  return (error: unknown, c: Context) => {
    const known = InterludeError.isInstance(error)
    const failure = InterludeError.fromUnknown(error)
    if (!known) logError(`${c.req.method} ${c.req.path} failed`, error)
    c.set('errorCode', failure.code)
    // A refusal that may pass soon says when (quotas: details.retryAfterSeconds; a store that cannot take writes now).
    const retryAfter =
      retryAfterOf(failure) ?? (failure.code === 'STORE_UNAVAILABLE' ? String(STORE_RETRY_AFTER_S) : undefined)
    if (retryAfter !== undefined) c.header('Retry-After', retryAfter)
    return c.json(failure.toEnvelope(), failure.status as 400)
  }
}

export const notFoundHandler: NotFoundHandler = (c) => {
  c.set('errorCode', 'NOT_FOUND')
  return c.json(new InterludeError('NOT_FOUND', 'No such route.').toEnvelope(), 404)
}
