import type { Hono, MiddlewareHandler } from 'hono'
import { InterludeError } from '@interlude/protocol'
import type { ToolCallClaimed } from '@interlude/protocol'
import type { Clock } from '../../clock.ts'
import type { Limits } from '../../config/limits.ts'
import { checkIdentifier } from '../../core/admission/parse-input.ts'
import type { ThreadAccessDeps } from '../../core/access/thread-access.ts'
import { accessibleThread } from '../../core/access/thread-access.ts'
import type { Store } from '../../store/store.ts'
import { threadKey } from '../../store/thread-key.ts'
import type { ServerEnv } from '../env.ts'
import { jsonBody } from '../middleware/json-body.ts'

export interface ToolClaimRoutesDeps {
  readonly access: ThreadAccessDeps
  readonly store: Pick<Store, 'getToolCall' | 'claimToolCall'>
  readonly now: Clock
  readonly limits: Limits
}

function parseClaimId(body: unknown): string {
  const value = body as { claimId?: unknown } | null
  const keys = typeof value === 'object' && value !== null && !Array.isArray(value) ? Object.keys(value) : undefined
  if (!keys || keys.some((k) => k !== 'claimId') || typeof value!.claimId !== 'string')
    throw new InterludeError('INVALID_INPUT', 'The body must be { claimId: string }.')
  return checkIdentifier('claimId', value!.claimId)
}

/**
 * `POST {base}/threads/:threadId/tool-calls/:toolCallId/claim` (docs/protocol.md#browser-tool-claims): a tab claims a
 * browser call waiting for its result before it runs the handler. One claim wins in the store; the same claim id
 * again is answered the same. The owner's own thread only (browser calls run in the owner's clients).
 */
export function registerToolClaimRoutes(
  app: Hono<ServerEnv>,
  basePath: string,
  auth: MiddlewareHandler<ServerEnv>,
  deps: ToolClaimRoutesDeps,
): void {
  const { access, store, now, limits } = deps
  app.post(`${basePath}/threads/:threadId/tool-calls/:toolCallId/claim`, auth, jsonBody(limits), async (c) => {
    const threadId = checkIdentifier('threadId', c.req.param('threadId'))
    const toolCallId = checkIdentifier('toolCallId', c.req.param('toolCallId'))
    const claimId = parseClaimId(c.get('body'))
    const principal = c.get('principal')
    const thread = await accessibleThread(access, threadKey(principal, threadId), principal, 'owner')
    const claimed = await store.claimToolCall({ threadId: thread.threadId, toolCallId, claimId, now: now() })
    if (claimed.ok) return c.json({ toolCallId, claimId } satisfies ToolCallClaimed)
    if (claimed.reason === 'taken')
      throw new InterludeError('TOOL_CALL_CLAIMED', 'Another client claimed this browser tool call.', {
        details: { toolCallId },
      })
    const call = await store.getToolCall(thread.threadId, toolCallId)
    // Held while its response waits for a decision (docs/decisions.md#a-turn-keeps-its-promises): not offered yet.
    if (call?.kind === 'client' && call.status === 'pending')
      throw new InterludeError('INTERRUPTS_PENDING', 'This browser tool call waits for a decision; answer it first.', {
        details: { toolCallId },
      })
    if (call?.kind === 'client')
      throw new InterludeError('TOOL_RESULTS_ALREADY_SUBMITTED', 'This browser tool call already has a result.', {
        details: { toolCallIds: [toolCallId] },
      })
    throw new InterludeError('UNKNOWN_TOOL_CALL', 'This thread has no such browser tool call.', {
      details: { toolCallId },
    })
  })
}
