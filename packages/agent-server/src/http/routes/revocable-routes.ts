import type { Hono, MiddlewareHandler } from 'hono'
import { InterludeError } from '@interlude/protocol'
import type { Clock } from '../../clock.ts'
import { checkIdentifier } from '../../core/admission/parse-input.ts'
import type { DecisionRights, ManagedRule } from '../../core/access/decision-rights.ts'
import type { ServerEnv } from '../env.ts'
import { threadOwner } from '../thread-address.ts'

/** What the list and revoke routes of one kind of standing permission (rules, grants) need. */
export interface Revocable<T> {
  /** The collection's path under `basePath` (`permission-rules`, `grants`). */
  readonly path: string
  /** The id's name in the path and in errors (`ruleId`, `grantId`). */
  readonly idName: string
  /** The 404 message. */
  readonly notFound: string
  /** The owner's items that may still apply (`threadId`: those that apply in that thread). */
  list(owner: string, threadId: string | undefined): Promise<readonly T[]>
  /** The item as the right to manage it is judged (`DecisionRights.mayManageRule`). */
  managed(item: T): ManagedRule
  revoke(owner: string, id: string, at: number): Promise<boolean>
}

export interface RevocableRoutesDeps {
  readonly rights: Pick<DecisionRights, 'mayManageRule'>
  readonly now: Clock
}

/**
 * `GET {base}/<path>` and `DELETE {base}/<path>/:id` (docs/approvals.md#remembered-permissions): the caller lists the
 * items that approve calls in their threads (`?threadId=` narrows to those that apply in that thread) and revokes one.
 * With `?owner=`, another owner's items the caller made or could make (may decide the calls they approve). Any other
 * item answers 404 exactly like an unknown one.
 */
export function registerRevocableRoutes<T>(
  app: Hono<ServerEnv>,
  basePath: string,
  auth: MiddlewareHandler<ServerEnv>,
  deps: RevocableRoutesDeps,
  kind: Revocable<T>,
): void {
  const { rights, now } = deps

  /** The owner's items the caller may see (its own: all of them). */
  async function visible(principal: string, owner: string, threadId?: string) {
    const items = await kind.list(owner, threadId)
    if (owner === principal) return items
    const allowed = await Promise.all(items.map((item) => rights.mayManageRule(principal, kind.managed(item))))
    return items.filter((_, i) => allowed[i])
  }

  app.get(`${basePath}/${kind.path}`, auth, async (c) => {
    const threadParam = c.req.query('threadId')
    const threadId = threadParam === undefined ? undefined : checkIdentifier('threadId', threadParam)
    const items = await visible(c.get('principal'), threadOwner(c), threadId)
    return c.json({ items })
  })

  app.delete(`${basePath}/${kind.path}/:id`, auth, async (c) => {
    const id = checkIdentifier(kind.idName, c.req.param('id'))
    const owner = threadOwner(c)
    const known = (await visible(c.get('principal'), owner)).some((item) => kind.managed(item).ruleId === id)
    // Revoking twice is not an error a person can act on, but it is not a success either: 404 both times after the first.
    if (!known || !(await kind.revoke(owner, id, now()))) throw new InterludeError('NOT_FOUND', kind.notFound)
    return c.body(null, 204)
  })
}
