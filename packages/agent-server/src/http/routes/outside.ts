import type { Hono } from 'hono'
import type { ServerConfig } from '../../config/server-config.ts'
import type { OutsideDecisionsDeps } from '../../core/admission/outside-decisions.ts'
import { OutsideDecisions } from '../../core/admission/outside-decisions.ts'
import type { ServerEnv } from '../env.ts'
import { registerDecisionLinkRoutes } from './decision-links.ts'
import { registerSlackRoutes } from './slack-actions.ts'

/**
 * Deciding outside the app (docs/approvals.md#deciding-outside-the-app): the decision-link pages with a public URL,
 * the Slack actions route with Slack settings. Neither route is registered without its settings.
 */
export function registerOutsideRoutes(
  app: Hono<ServerEnv>,
  basePath: string,
  config: Pick<ServerConfig, 'links' | 'slack' | 'now' | 'logError' | 'limits'>,
  deps: OutsideDecisionsDeps,
): void {
  const outside = new OutsideDecisions(deps)
  if (config.links) registerDecisionLinkRoutes(app, basePath, { links: config.links, outside })
  if (config.slack) {
    const { now, logError } = config
    registerSlackRoutes(app, basePath, {
      slack: config.slack,
      outside,
      now,
      logError,
      maxBodyBytes: config.limits.maxBodyBytes,
    })
  }
}
