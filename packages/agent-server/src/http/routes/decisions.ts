import type { Hono, MiddlewareHandler } from 'hono'
import { InterludeError } from '@interlude/protocol'
import type { DecisionAccepted } from '@interlude/protocol'
import type { AdmissionDeps } from '../../core/admission/admission.ts'
import { admitDecision } from '../../core/admission/admission.ts'
import type { Limits } from '../../config/limits.ts'
import { parseDecisionRequest } from '../../core/admission/parse-decision.ts'
import { checkIdentifier } from '../../core/admission/parse-input.ts'
import type { RunManager } from '../../core/runs/run-manager.ts'
import { runView } from '../../core/runs/run-view.ts'
import type { ThreadAccessDeps } from '../../core/access/thread-access.ts'
import { accessibleThread } from '../../core/access/thread-access.ts'
import type { ServerEnv } from '../env.ts'
import { jsonBody } from '../middleware/json-body.ts'
import { admissionTiming } from '../middleware/admission-turn.ts'
import type { AdmissionTurns } from '../../core/runs/admission-turns.ts'
import { addressedThread } from '../thread-address.ts'

export interface DecisionRoutesDeps {
  readonly admission: AdmissionDeps
  readonly access: ThreadAccessDeps
  readonly runs: RunManager
  readonly limits: Limits
  /** Admission turns (core/runs/admission-turns.ts): the decision is an admission in progress while it decides. */
  readonly turns?: AdmissionTurns | undefined
}

/**
 * Deciding without a chat stream (docs/approvals.md): `POST {base}/threads/:threadId/decisions` admits a decision
 * through the one resume admission (`via: 'api'`) and answers `202` while the turn continues in the background;
 * `GET {base}/threads/:threadId/runs/:runId` says where a run stands and which decision it carries out.
 */
export function registerDecisionRoutes(
  app: Hono<ServerEnv>,
  basePath: string,
  auth: MiddlewareHandler<ServerEnv>,
  deps: DecisionRoutesDeps,
): void {
  const { admission, access, runs, limits } = deps
  const { store } = admission

  app.post(`${basePath}/threads/:threadId/decisions`, auth, jsonBody(limits), async (c) => {
    const startedAt = performance.now()
    const threadId = checkIdentifier('threadId', c.req.param('threadId'))
    const { runId, resume } = parseDecisionRequest(c.get('body'), limits)
    const key = addressedThread(c, threadId)
    const admit = () => admitDecision(admission, c.get('principal'), { threadId: key, runId, resume }, 'api')
    const admitted = await (deps.turns ? deps.turns.admit(admit) : admit())
    // A retry of an admitted decision (same runId, same entries) answers the same; the run executes once.
    if (admitted.kind === 'start') runs.start(admitted.plan)
    // Admission time, as `POST /runs` reports it (the approvals benchmark reads it).
    c.header('Server-Timing', admissionTiming(c.var, startedAt))
    // A vote that settled nothing: what is still missing (docs/approvals.md#organisation-policies).
    const pending = admitted.kind === 'voted' ? { pending: admitted.pending } : {}
    return c.json({ threadId, runId, ...pending } satisfies DecisionAccepted, 202)
  })

  app.get(`${basePath}/threads/:threadId/runs/:runId`, auth, async (c) => {
    const threadId = checkIdentifier('threadId', c.req.param('threadId'))
    const runId = checkIdentifier('runId', c.req.param('runId'))
    const thread = await accessibleThread(access, addressedThread(c, threadId), c.get('principal'), 'readers')
    const [run, decision] = await Promise.all([
      store.getRun(thread.threadId, runId),
      store.getDecision(thread.threadId, runId),
    ])
    if (!run) throw new InterludeError('RUN_NOT_FOUND', 'Run not found.')
    return c.json(runView(run, decision))
  })
}
