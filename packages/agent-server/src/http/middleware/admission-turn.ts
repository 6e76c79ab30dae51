import type { MiddlewareHandler } from 'hono'
import type { AdmissionTurns } from '../../core/runs/admission-turns.ts'
import type { ServerEnv } from '../env.ts'

/**
 * An admission request's first step after the request log: it waits for its turn (core/runs/admission-turns.ts) before
 * the rest of its middleware, authentication, body and checks run. When its turn came is `c.var.turnAt` (the
 * admission is timed from there) and how long it waited `c.var.turnWaitMs`: `Server-Timing: turn;dur=…,
 * admission;dur=…`. Other requests pass untouched. Runs are held back while a request waits here (any request: who
 * sent it is not known yet) or its route decides (`AdmissionTurns.admit`); after its turn, a body still arriving or a
 * refusal before the checks holds nothing.
 */
export function admissionTurn(
  turns: AdmissionTurns,
  isAdmission: (method: string, path: string) => boolean,
): MiddlewareHandler<ServerEnv> {
  return async function admissionTurn(c, next) {
    if (!isAdmission(c.req.method, c.req.path)) return next()
    const queuedAt = performance.now()
    const turn = turns.take()
    if (turn) await turn
    const turnAt = performance.now()
    c.set('turnAt', turnAt)
    c.set('turnWaitMs', turnAt - queuedAt)
    c.var.metrics.turnWaitSeconds.observe((turnAt - queuedAt) / 1000)
    await next()
  }
}

/**
 * `Server-Timing` of an admission answered at `answeredAt`: with turns, the wait for the turn and the admission from
 * the turn on (authentication, body, checks, claim); without, the admission from the parsed body on (`startedAt`).
 */
export function admissionTiming(
  vars: { readonly turnAt: number | undefined; readonly turnWaitMs: number | undefined },
  startedAt: number,
  answeredAt = performance.now(),
): string {
  const { turnAt, turnWaitMs } = vars
  if (turnAt === undefined || turnWaitMs === undefined) return `admission;dur=${(answeredAt - startedAt).toFixed(3)}`
  return `turn;dur=${turnWaitMs.toFixed(3)}, admission;dur=${(answeredAt - turnAt).toFixed(3)}`
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
