import type { Hono, MiddlewareHandler } from 'hono'
import { InterludeError } from '@interlude/protocol'
import type { PermissionRuleList } from '@interlude/protocol'
import type { Clock } from '../../clock.ts'
import { checkIdentifier } from '../../core/admission/parse-input.ts'
import type { DecisionRights } from '../../core/access/decision-rights.ts'
import type { Store } from '../../store/store.ts'
import type { ServerEnv } from '../env.ts'
import { threadOwner } from '../thread-address.ts'

export interface PermissionRuleRoutesDeps {
  readonly store: Store
  readonly rights: Pick<DecisionRights, 'mayManageRule'>
  readonly now: Clock
}

/**
 * Remembered permissions (docs/approvals.md#remembered-permissions): the caller lists the active rules
 * that approve calls in their threads (`?threadId=` narrows to the rules that apply in that thread:
 * principal-wide ones and that thread's) and revokes one. With `?owner=`, another owner's rules the caller made or
 * could make (may decide the calls they approve). Any other rule answers 404 exactly like an unknown one.
 */
export function registerPermissionRuleRoutes(
  app: Hono<ServerEnv>,
  basePath: string,
  auth: MiddlewareHandler<ServerEnv>,
  deps: PermissionRuleRoutesDeps,
): void {
  const { store, rights, now } = deps

  /** The owner's active rules the caller may see (its own: all of them). */
  async function visible(principal: string, owner: string, threadId?: string) {
    const rules = await store.listPermissionRules(owner, threadId === undefined ? {} : { threadId })
    if (owner === principal) return rules
    const allowed = await Promise.all(rules.map((rule) => rights.mayManageRule(principal, rule)))
    return rules.filter((_, i) => allowed[i])
  }

  app.get(`${basePath}/permission-rules`, auth, async (c) => {
    const threadParam = c.req.query('threadId')
    const threadId = threadParam === undefined ? undefined : checkIdentifier('threadId', threadParam)
    const items = await visible(c.get('principal'), threadOwner(c), threadId)
    return c.json({ items } satisfies PermissionRuleList)
  })

  app.delete(`${basePath}/permission-rules/:ruleId`, auth, async (c) => {
    const ruleId = checkIdentifier('ruleId', c.req.param('ruleId'))
    const owner = threadOwner(c)
    const known = (await visible(c.get('principal'), owner)).some((rule) => rule.ruleId === ruleId)
    // Revoking twice is not an error a person can act on, but it is not a success either: 404 both times after the first.
    if (!known || !(await store.revokePermissionRule(owner, ruleId, now()))) {
      throw new InterludeError('NOT_FOUND', 'Permission rule not found.')
    }
    return c.body(null, 204)
  })
}
