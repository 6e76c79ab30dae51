import type { Hono, MiddlewareHandler } from 'hono'
import { InterludeError } from '@interlude/protocol'
import type { Clock } from '../../clock.ts'
import type { PendingInboxDeps } from '../../core/access/pending-inbox.ts'
import { decodePendingCursor, pendingInbox } from '../../core/access/pending-inbox.ts'
import type { ServerEnv } from '../env.ts'
import { parseLimit } from '../query-params.ts'

/**
 * `GET {base}/interrupts?status=pending&limit=&cursor=` (docs/approvals.md): the open batches the caller may decide,
 * whoever owns their threads, newest first, in keyset pages (`PendingBatchPage`).
 */
export function registerInterruptRoutes(
  app: Hono<ServerEnv>,
  basePath: string,
  auth: MiddlewareHandler<ServerEnv>,
  deps: PendingInboxDeps & {
    readonly now: Clock
    /** Charges the requests quota for the rows a page read beyond the first 100 (`Quotas.charge`). */
    readonly charge?: (key: string, points: number) => Promise<void>
  },
): void {
  app.get(`${basePath}/interrupts`, auth, async (c) => {
    const status = c.req.query('status') ?? 'pending'
    if (status !== 'pending') throw new InterludeError('INVALID_INPUT', 'status must be pending.')
    const limit = parseLimit(c.req.query('limit'))
    const cursor = c.req.query('cursor')
    const principal = c.get('principal')
    const { scanned, ...page } = await pendingInbox(deps, principal, {
      limit,
      now: deps.now(),
      before: cursor === undefined ? undefined : decodePendingCursor(cursor),
    })
    // The inbox's cost counts in the quota: every 100 rows read past the first cost one more request.
    await deps.charge?.(c.get('quotaKey') ?? principal, Math.floor(scanned / 100))
    return c.json(page)
  })
}
