import type { Hono, MiddlewareHandler } from 'hono'
import type { ForkRequest, ThreadForkList } from '@interlude/protocol'
import { ForkRequestSchema } from '@interlude/protocol/schemas'
import type { Limits } from '../../config/limits.ts'
import { checkIdentifier, parseBody } from '../../core/admission/parse-input.ts'
import type { ThreadAccessDeps } from '../../core/access/thread-access.ts'
import { accessibleThread } from '../../core/access/thread-access.ts'
import type { ForkDeps } from '../../core/forks/fork-thread.ts'
import { forksOf, forkThread } from '../../core/forks/fork-thread.ts'
import { clientThreadId, threadKey } from '../../store/thread-key.ts'
import type { ServerEnv } from '../env.ts'
import { jsonBody } from '../middleware/json-body.ts'
import { parseLimit } from '../query-params.ts'

export interface ForkRoutesDeps extends ForkDeps {
  readonly access: ThreadAccessDeps
  readonly limits: Limits
  /** The caller's new-threads quota (a fork is a new thread): throws `RATE_LIMITED` past it. */
  readonly newThread: (owner: string) => Promise<void>
}

/**
 * Time travel (docs/time-travel.md): `POST {base}/threads/:threadId/fork` makes a fork of the caller's own thread
 * (`201 { threadId, parent }`), `GET {base}/threads/:threadId/forks` lists its forks. Owner only: for anybody else the
 * thread does not exist (404) and nothing is written.
 */
export function registerForkRoutes(
  app: Hono<ServerEnv>,
  basePath: string,
  auth: MiddlewareHandler<ServerEnv>,
  deps: ForkRoutesDeps,
): void {
  app.post(`${basePath}/threads/:threadId/fork`, auth, jsonBody(deps.limits), async (c) => {
    const principal = c.get('principal')
    const request = parseBody<ForkRequest>(ForkRequestSchema, c.get('body'), 'ForkRequest { at, threadId?, edit? }')
    if (request.threadId !== undefined) checkIdentifier('threadId', request.threadId)
    const parent = await accessibleThread(
      deps.access,
      threadKey(principal, c.req.param('threadId')),
      principal,
      'owner',
    )
    await deps.newThread(principal)
    return c.json(await forkThread(deps, parent, request), 201)
  })

  app.get(`${basePath}/threads/:threadId/forks`, auth, async (c) => {
    const principal = c.get('principal')
    const limit = parseLimit(c.req.query('limit') ?? '100')
    const parent = await accessibleThread(
      deps.access,
      threadKey(principal, c.req.param('threadId')),
      principal,
      'owner',
    )
    const children = await forksOf(deps.store).listForks(parent.threadId, limit)
    const body: ThreadForkList = {
      items: children.map((f) => ({
        threadId: clientThreadId(f.threadId),
        at: f.at,
        createdAt: new Date(f.createdAt).toISOString(),
      })),
    }
    return c.json(body)
  })
}
