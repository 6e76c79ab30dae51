import type { Hono, MiddlewareHandler } from 'hono'
import { InterludeError } from '@interlude/protocol'
import type { PermissionRuleList } from '@interlude/protocol'
import type { Clock } from '../../clock.ts'
import { checkIdentifier } from '../../core/admission/parse-input.ts'
import type { Store } from '../../store/store.ts'
import type { ServerEnv } from '../env.ts'

export interface PermissionRuleRoutesDeps {
  readonly store: Store
  readonly now: Clock
}

/**
 * Remembered permissions (docs/approvals.md#remembered-permissions): the caller lists the active rules
 * that approve calls in their threads (`?threadId=` narrows to the rules that apply in that thread:
 * principal-wide ones and that thread's) and revokes one. Rules belong to the thread owner; another
 * principal's rule answers 404 exactly like an unknown one.
 */
export function registerPermissionRuleRoutes(
  app: Hono<ServerEnv>,
  basePath: string,
  auth: MiddlewareHandler<ServerEnv>,
  deps: PermissionRuleRoutesDeps,
): void {
  const { store, now } = deps

  app.get(`${basePath}/permission-rules`, auth, async (c) => {
    const threadParam = c.req.query('threadId')
    const filter = threadParam === undefined ? {} : { threadId: checkIdentifier('threadId', threadParam) }
    const items = await store.listPermissionRules(c.get('principal'), filter)
    return c.json({ items } satisfies PermissionRuleList)
  })

  app.delete(`${basePath}/permission-rules/:ruleId`, auth, async (c) => {
    const ruleId = checkIdentifier('ruleId', c.req.param('ruleId'))
    // Revoking twice is not an error a person can act on, but it is not a success either: 404 both times after the first.
    if (!(await store.revokePermissionRule(c.get('principal'), ruleId, now()))) {
      throw new InterludeError('NOT_FOUND', 'Permission rule not found.')
    }
    return c.body(null, 204)
  })
}
