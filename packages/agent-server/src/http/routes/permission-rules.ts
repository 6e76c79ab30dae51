import type { Hono, MiddlewareHandler } from 'hono'
import type { Clock } from '../../clock.ts'
import type { DecisionRights } from '../../core/access/decision-rights.ts'
import type { Store } from '../../store/store.ts'
import type { ServerEnv } from '../env.ts'
import { registerRevocableRoutes } from './revocable-routes.ts'

export interface PermissionRuleRoutesDeps {
  readonly store: Store
  readonly rights: Pick<DecisionRights, 'mayManageRule'>
  readonly now: Clock
}

/**
 * Remembered permissions (docs/approvals.md#remembered-permissions) and bounded grants (docs/approvals.md#bounded-grants):
 * `GET`/`DELETE {base}/permission-rules[/:ruleId]` and `GET`/`DELETE {base}/grants[/:grantId]`, the same rights for
 * both (`revocable-routes.ts`). Grants are listed while they may still apply: calls left, not expired, not revoked.
 */
export function registerPermissionRuleRoutes(
  app: Hono<ServerEnv>,
  basePath: string,
  auth: MiddlewareHandler<ServerEnv>,
  deps: PermissionRuleRoutesDeps,
): void {
  const { store, now } = deps
  registerRevocableRoutes(app, basePath, auth, deps, {
    path: 'permission-rules',
    idName: 'ruleId',
    notFound: 'Permission rule not found.',
    list: (owner, threadId) => store.listPermissionRules(owner, threadId === undefined ? {} : { threadId }),
    managed: (rule) => rule,
    revoke: (owner, id, at) => store.revokePermissionRule(owner, id, at),
  })
  const grants = store.grants
  registerRevocableRoutes(app, basePath, auth, deps, {
    path: 'grants',
    idName: 'grantId',
    notFound: 'Grant not found.',
    list: async (owner, threadId) =>
      grants ? grants.list(owner, { now: now(), ...(threadId === undefined ? {} : { threadId }) }) : [],
    managed: (grant) => ({ ...grant, ruleId: grant.grantId, ...(grant.match ? { argsMatch: grant.match } : {}) }),
    revoke: async (owner, id, at) => (grants ? grants.revoke(owner, id, at) : false),
  })
}
