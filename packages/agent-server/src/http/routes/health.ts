import type { Hono } from 'hono'
import { InterludeError } from '@interlude/protocol'
import type { ErrorCode } from '@interlude/protocol'
import { storeHealthOf } from '../../store/store-errors.ts'
import type { Store } from '../../store/store.ts'
import type { ServerEnv } from '../env.ts'

/** One readiness condition: `undefined` when it holds, otherwise the code `GET {base}/health?ready` answers 503 with. */
export interface ReadinessCheck {
  readonly name: string
  check(): Promise<ErrorCode | undefined> | ErrorCode | undefined
}

/** How long one probe write answers readiness (bounds the writes an unauthenticated prober can cause). */
const PROBE_CACHE_MS = 1000

/**
 * Readiness of the store: a probe write (`Store.probeWrite`, or a ping for a store without one), coalesced and
 * cached for a second. It fails while the store cannot persist — a full disk, a lost or read-only database — and
 * recovers by itself once writes succeed again.
 */
export function storeWritable(store: Store, logError: (message: string, error: unknown) => void): ReadinessCheck {
  let last: { at: number; ok: boolean } | undefined
  let inFlight: Promise<boolean> | undefined
  const probe = async (): Promise<boolean> => {
    try {
      await (store.probeWrite ? store.probeWrite() : store.ping())
      return true
    } catch (error) {
      logError('readiness: the store refused a probe write', error)
      return false
    }
  }
  return {
    name: 'store',
    async check() {
      // A run's write that failed since the last probe is news: probe again rather than answer from the cache.
      let result = last
      const stale = result === undefined || performance.now() - result.at >= PROBE_CACHE_MS
      if (stale || (result?.ok === true && storeHealthOf(store)?.writesFailing === true)) {
        inFlight ??= probe().finally(() => (inFlight = undefined))
        result = last = { at: performance.now(), ok: await inFlight }
      }
      return result?.ok === true ? undefined : 'STORE_UNAVAILABLE'
    },
  }
}

const MESSAGES: Partial<Record<ErrorCode, string>> = {
  STORE_UNAVAILABLE: 'The store is unavailable.',
}

/**
 * `GET {base}/health` (docs/protocol.md#get-basehealth), public and minimal: liveness with store reachability
 * (`200 { status: "ok" }` or `503 STORE_UNAVAILABLE`), and with `?ready` readiness — every check in `readiness`
 * (the store takes writes; others may be added, e.g. "not shutting down") — `200 { status: "ready" }` or 503 with
 * the first failing check's code. Counts and other details are on the metrics endpoint only.
 */
export function registerHealthRoute(
  app: Hono<ServerEnv>,
  basePath: string,
  deps: {
    readonly store: Store
    readonly readiness: readonly ReadinessCheck[]
    readonly logError: (message: string, error: unknown) => void
  },
): void {
  const { store, readiness, logError } = deps
  app.get(`${basePath}/health`, async (c) => {
    if (c.req.query('ready') !== undefined) {
      for (const check of readiness) {
        const code = await check.check()
        if (code !== undefined) throw new InterludeError(code, MESSAGES[code] ?? 'Not ready.')
      }
      return c.json({ status: 'ready' })
    }
    try {
      await store.ping()
    } catch (error) {
      logError('health check: store unreachable', error)
      throw new InterludeError('STORE_UNAVAILABLE', 'The store is unreachable.')
    }
    return c.json({ status: 'ok' })
  })
}
