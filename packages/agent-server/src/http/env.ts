/** Hono variables set by the middleware of the agent server. */
export interface ServerEnv {
  Variables: {
    /** The authenticated principal (thread owner). */
    principal: string
    /** The parsed JSON body (after the body limit). */
    body: unknown
  }
}
