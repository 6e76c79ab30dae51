import type { MiddlewareHandler } from 'hono'
import type { AdmissionTurns } from '../../core/admission-turns.ts'
import type { ServerEnv } from '../env.ts'
import { http1Incoming } from './unread-body.ts'

/**
 * An admission request's first step after the request log: it waits for its turn (core/admission-turns.ts) before
 * the rest of its middleware, authentication, body and checks run, and it holds the runs admitted meanwhile back until
 * the route answered. How long it waited is `c.var.turnWaitMs`, reported as `Server-Timing: turn;dur=…` beside
 * `admission;dur=…`. Other requests pass untouched.
 *
 * A request whose body has not fully arrived when its turn comes holds no run back: a slow (or hostile) client would
 * otherwise delay every run's start by the turns' bound for as long as it trickles its body.
 */
export function admissionTurn(
  turns: AdmissionTurns,
  isAdmission: (method: string, path: string) => boolean,
): MiddlewareHandler<ServerEnv> {
  return async function admissionTurn(c, next) {
    if (!isAdmission(c.req.method, c.req.path)) return next()
    const queuedAt = performance.now()
    const turn = turns.take()
    let ended = false
    const end = () => {
      if (ended) return
      ended = true
      turns.end()
    }
    try {
      if (turn) await turn
      c.set('turnWaitMs', performance.now() - queuedAt)
      if (http1Incoming(c.env)?.complete === false) end()
      await next()
    } finally {
      end()
    }
  }
}

/** `Server-Timing` of an admission: the wait for its turn (when it took one) and the admission itself. */
export function admissionTiming(turnWaitMs: number | undefined, admissionMs: number): string {
  const admission = `admission;dur=${admissionMs.toFixed(3)}`
  return turnWaitMs === undefined ? admission : `turn;dur=${turnWaitMs.toFixed(3)}, ${admission}`
}

/** `POST {base}/runs` and `POST {base}/threads/:threadId/decisions`: the requests that admit a run. */
export function isAdmissionRequest(basePath: string): (method: string, path: string) => boolean {
  const runs = `${basePath}/runs`
  const threads = `${basePath}/threads/`
  const decisions = '/decisions'
  return (method, path) => {
    if (method !== 'POST') return false
    if (path === runs) return true
    // `{base}/threads/<one segment>/decisions`
    const slash = path.indexOf('/', threads.length)
    return (
      path.startsWith(threads) &&
      slash > threads.length &&
      slash === path.length - decisions.length &&
      path.endsWith(decisions)
    )
  }
}
