import type { Hono, MiddlewareHandler } from 'hono'
import { InterludeError } from '@interlude/protocol'
import type { Clock } from '../../clock.ts'
import type { Limits } from '../../config/limits.ts'
import { checkIdentifier } from '../../core/admission/parse-input.ts'
import type { ThreadAccessDeps } from '../../core/access/thread-access.ts'
import { accessibleThread } from '../../core/access/thread-access.ts'
import type { Store } from '../../store/store.ts'
import type { ServerEnv } from '../env.ts'
import { jsonBody } from '../middleware/json-body.ts'
import { addressedThread } from '../thread-address.ts'

export interface EffectRoutesDeps {
  readonly access: ThreadAccessDeps
  readonly store: Pick<Store, 'getToolCall' | 'reconcileEffect'>
  readonly now: Clock
  readonly limits: Limits
}

/** The answer of the reconcile route (also for a repeated, identical reconcile). */
export interface EffectReconciled {
  readonly toolCallId: string
  readonly status: 'succeeded' | 'failed'
  readonly reconciledBy: string
  readonly at: string
}

interface Recorded {
  readonly status: 'succeeded' | 'failed'
  readonly reconciled: { readonly by: string; readonly at: string }
  readonly result?: unknown
}

function parseBody(body: unknown): { outcome: 'succeeded' | 'failed'; result: unknown } {
  const value = body as { outcome?: unknown; result?: unknown } | null
  const keys = typeof value === 'object' && value !== null && !Array.isArray(value) ? Object.keys(value) : undefined
  if (
    !keys ||
    keys.some((k) => k !== 'outcome' && k !== 'result') ||
    (value!.outcome !== 'succeeded' && value!.outcome !== 'failed')
  )
    throw new InterludeError('INVALID_INPUT', 'The body must be { outcome: "succeeded" | "failed", result? }.')
  return { outcome: value!.outcome, result: value!.result }
}

/** A stored call's arguments; text that is not JSON (a rejected call) is judged as no arguments. */
function parsedArgs(text: string): unknown {
  try {
    return JSON.parse(text) as unknown
  } catch {
    return {}
  }
}

function recorded(text: string | undefined): Recorded | undefined {
  try {
    const parsed = JSON.parse(text ?? '') as Recorded
    return typeof parsed?.reconciled?.by === 'string' ? parsed : undefined
  } catch {
    return undefined
  }
}

/**
 * `POST {base}/threads/:threadId/effects/:toolCallId/reconcile` (docs/protocol.md): a person settles an effect whose
 * outcome is unknown (its run died while the tool ran; it was never re-run) with what they found out. The owner, or a
 * reader of the thread who may decide that call (its tool's approval); anybody else gets `THREAD_NOT_FOUND`. Only an `unknown` call can be
 * reconciled (one conditional update in the store); the same reconcile again answers the same, a different one is
 * `409 EFFECT_NOT_UNKNOWN`. The ledger records the outcome, who reconciled it and when; the tool never runs again.
 */
export function registerEffectRoutes(
  app: Hono<ServerEnv>,
  basePath: string,
  auth: MiddlewareHandler<ServerEnv>,
  deps: EffectRoutesDeps,
): void {
  const { access, store, now, limits } = deps
  app.post(`${basePath}/threads/:threadId/effects/:toolCallId/reconcile`, auth, jsonBody(limits), async (c) => {
    const threadId = checkIdentifier('threadId', c.req.param('threadId'))
    const toolCallId = checkIdentifier('toolCallId', c.req.param('toolCallId'))
    const { outcome, result } = parseBody(c.get('body'))
    const principal = c.get('principal')
    const thread = await accessibleThread(access, addressedThread(c, threadId), principal, 'readers')
    const call = await store.getToolCall(thread.threadId, toolCallId)
    if (!call)
      throw new InterludeError('UNKNOWN_TOOL_CALL', 'This thread has no such tool call.', { details: { toolCallId } })
    // Reading the thread is not enough: settling an effect needs the right to decide that call (docs/approvals.md).
    if (thread.ownerId !== principal) {
      const judged = { toolName: call.toolName, toolCallId, args: parsedArgs(call.argsText) }
      if (!(await access.rights.mayDecideCall(principal, thread.ownerId, threadId, judged)))
        throw new InterludeError('THREAD_NOT_FOUND', 'Thread not found.')
    }
    const at = new Date(now()).toISOString()
    const record: Recorded = {
      status: outcome,
      reconciled: { by: principal, at },
      ...(result !== undefined && { result }),
    }
    const text = JSON.stringify(record)
    if (
      await store.reconcileEffect({ threadId: thread.threadId, toolCallId, status: outcome, result: text, now: now() })
    )
      return c.json({ toolCallId, status: outcome, reconciledBy: principal, at } satisfies EffectReconciled)
    // Idempotent: the same outcome and result, reconciled already, is answered with that record.
    const current = await store.getToolCall(thread.threadId, toolCallId)
    const prior = recorded(current?.result)
    if (prior && current?.status === outcome && JSON.stringify(prior.result ?? null) === JSON.stringify(result ?? null))
      return c.json({ toolCallId, status: outcome, reconciledBy: prior.reconciled.by, at: prior.reconciled.at })
    throw new InterludeError('EFFECT_NOT_UNKNOWN', 'The outcome of this call is not unknown.', {
      details: { toolCallId, status: current?.status ?? call.status },
    })
  })
}
