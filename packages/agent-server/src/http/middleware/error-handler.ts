import type { Context, ErrorHandler, NotFoundHandler } from 'hono'
import { InterludeError } from '@interlude/protocol'
import { retryAfterOf } from './rate-limited.ts'

/**
 * The single error mapping: an `InterludeError` becomes `c.json(err.toEnvelope(), err.status)`;
 * anything else becomes `INTERNAL` with a generic message (the raw error only goes to the log).
 */
export function errorHandler(logError: (message: string, error: unknown) => void): ErrorHandler {
  return (error: unknown, c: Context) => {
    const known = InterludeError.isInstance(error)
    const failure = InterludeError.fromUnknown(error)
    if (!known) logError(`${c.req.method} ${c.req.path} failed`, error)
    const retryAfter = retryAfterOf(failure)
    if (retryAfter !== undefined) c.header('Retry-After', retryAfter)
    return c.json(failure.toEnvelope(), failure.status as 400)
  }
}

export const notFoundHandler: NotFoundHandler = (c) =>
  c.json(new InterludeError('NOT_FOUND', 'No such route.').toEnvelope(), 404)
