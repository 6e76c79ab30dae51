import type { Context, ErrorHandler, NotFoundHandler } from 'hono'
import { InterludeError } from '@interlude/protocol'

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
    // A store that cannot take writes now may take them soon (issue 12): tell clients when to try again.
    if (failure.code === 'STORE_UNAVAILABLE') c.header('Retry-After', String(STORE_RETRY_AFTER_S))
    return c.json(failure.toEnvelope(), failure.status as 400)
  }
}

export const notFoundHandler: NotFoundHandler = (c) => {
  c.set('errorCode', 'NOT_FOUND')
  return c.json(new InterludeError('NOT_FOUND', 'No such route.').toEnvelope(), 404)
}
