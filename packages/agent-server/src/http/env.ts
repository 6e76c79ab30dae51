import type { BodyBudget } from './middleware/body-budget.ts'

/** Hono variables set by the middleware of the agent server. */
export interface ServerEnv {
  Variables: {
    /** The authenticated principal (thread owner). */
    principal: string
    /** The parsed JSON body (after the body limit). */
    body: unknown
    /** The process's budget of buffered request bodies (`BodyBudget`), set by the quota middleware. */
    bodyBudget: BodyBudget | undefined
  }
}
