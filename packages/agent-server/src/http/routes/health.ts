import type { Hono } from 'hono'
import { InterludeError } from '@interlude/protocol'
import type { RunManager } from '../../core/run-manager.ts'
import type { Store } from '../../store/store.ts'
import type { ServerEnv } from '../env.ts'

/** `GET {base}/health`: liveness, store reachability (`503 STORE_UNAVAILABLE`) and the runs executing here. */
export function registerHealthRoute(
  app: Hono<ServerEnv>,
  basePath: string,
  deps: {
    readonly store: Store
    readonly runs: RunManager
    readonly logError: (message: string, error: unknown) => void
  },
): void {
  const { store, runs, logError } = deps
  app.get(`${basePath}/health`, async (c) => {
    try {
      await store.ping()
    } catch (error) {
      logError('health check: store unreachable', error)
      throw new InterludeError('STORE_UNAVAILABLE', 'The store is unreachable.')
    }
    return c.json({ status: 'ok', store: store.kind, activeRuns: runs.activeCount })
  })
}
