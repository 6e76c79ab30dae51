import type { MiddlewareHandler } from 'hono'

/** Holds every request until the server is ready (startup recovery ran), so none meets a dead run's leftovers first. */
export function awaitReady(ready: () => Promise<void>): MiddlewareHandler {
  return async function awaitReady(_c, next) {
    await ready()
    await next()
  }
}
