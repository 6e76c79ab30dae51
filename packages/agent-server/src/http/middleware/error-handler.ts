import type { Context, ErrorHandler, NotFoundHandler } from 'hono'
import { InterludeError } from '@interlude/protocol'

/**
 * The single error mapping: an `InterludeError` becomes `c.json(err.toEnvelope(), err.status)`;
 * anything else becomes `INTERNAL` with a generic message (the raw error only goes to the log).
 */
export function errorHandler(logError: (message: string, error: unknown) => void): ErrorHandler {
  return (error: unknown, c: Context) => {
    const known = InterludeError.isInstance(error)
    const failure = InterludeError.fromUnknown(error)
    if (!known) logError(`${c.req.method} ${c.req.path} failed`, error)
    return c.json(failure.toEnvelope(), failure.status as 400)
  }
}

export const notFoundHandler: NotFoundHandler = (c) =>
  c.json(new InterludeError('NOT_FOUND', 'No such route.').toEnvelope(), 404)
