import type { Hono, MiddlewareHandler } from 'hono'
import type { DecisionAccepted, RunQueued, RunSteered } from '@interlude/protocol'
import { SSE_HEADERS } from '@interlude/protocol/sse'
import type { AdmissionDeps } from '../../core/admission/admission.ts'
import type { AdmissionTurns } from '../../core/runs/admission-turns.ts'
import { admitRun } from '../../core/admission/admission.ts'
import type { EventHub } from '../../core/log/event-hub.ts'
import type { Limits } from '../../config/limits.ts'
import { parseRunInput } from '../../core/admission/parse-input.ts'
import type { RunManager } from '../../core/runs/run-manager.ts'
import { logFrames } from '../../core/log/log-frames.ts'
import type { ServerEnv } from '../env.ts'
import { takeStreamSlot } from '../middleware/quotas.ts'
import { jsonBody } from '../middleware/json-body.ts'
import { admissionTiming } from '../middleware/admission-turn.ts'
import type { SseBodyOptions } from '../sse-body.ts'
import { sseBody } from '../sse-body.ts'
import { threadOwner } from '../thread-address.ts'
import { threadKey } from '../../store/thread-key.ts'
import { multitaskOf } from '../../core/admission/multitask.ts'
import type { MultitaskStrategy } from '../../config/multitask.ts'
import type { RunQueue } from '../../core/queue/run-queue.ts'

export interface RunRoutesDeps {
  readonly admission: AdmissionDeps
  readonly runs: RunManager
  readonly hub: EventHub
  readonly limits: Limits
  readonly sse: SseBodyOptions
  /** A fresh run's stream starts after the admissions in progress, with its run (core/runs/admission-turns.ts). */
  readonly turns?: AdmissionTurns | undefined
  /** Aborted by a graceful shutdown once the runs were handed over: open run streams end (the client reconnects). */
  readonly closing?: AbortSignal
  /** Starts queued input (docs/protocol.md#multitask). */
  readonly queue: RunQueue
  /** The strategy of input that names none (`--multitask`). */
  readonly multitask: MultitaskStrategy
}

/**
 * `POST {base}/runs` (docs/protocol.md): body → `RunAgentInput` → admission, all before the
 * response exists, so a refusal is a JSON error and changes nothing. An admitted run (or the
 * retry of one) is answered with its events from the log as SSE; the run itself executes in the
 * run manager, independent of this connection.
 */
export function registerRunRoutes(
  app: Hono<ServerEnv>,
  basePath: string,
  auth: MiddlewareHandler<ServerEnv>,
  deps: RunRoutesDeps,
): void {
  const { admission, runs, hub, limits } = deps
  const { store } = admission
  app.post(`${basePath}/runs`, auth, jsonBody(limits), async (c) => {
    const startedAt = performance.now()
    const input = parseRunInput(c.get('body'), limits)
    const multitask = multitaskOf(input.forwardedProps, deps.multitask)
    const principal = c.get('principal')
    // The thread is the caller's own, or (`?owner=`) that owner's: a decider's resume, or the result of an external
    // call whose tool names the caller in `resultFrom`. Other input only ever goes to the caller's own thread, so an
    // id another principal uses is a different thread (src/store/thread-key.ts); admission refuses the rest.
    const owner = threadOwner(c)
    const threadId = threadKey(owner, input.threadId)
    const admit = () => admitRun(admission, principal, { ...input, threadId }, owner, { multitask })
    const admitted = await (deps.turns ? deps.turns.admit(admit) : admit())
    // Results for calls settled already: the first results, and nothing ran (docs/protocol.md#external-results).
    if (admitted.kind === 'settled') return c.json(admitted.answer, 200)
    if (admitted.kind === 'queued') {
      // `interrupt`: the running run is cancelled under the cancel rules; its end starts this input (queued first).
      if (admitted.interrupts !== undefined) {
        await store.requestCancel(threadId, admitted.interrupts, admission.now())
        runs.cancel(threadId, admitted.interrupts)
      }
      // The thread may have become free meanwhile (its run ended before this row committed).
      void deps.queue.kick(threadId)
      const queued: RunQueued = { threadId: input.threadId, runId: input.runId, queued: admitted.position }
      return c.json(queued, 202)
    }
    if (admitted.kind === 'voted') {
      // A vote that settled nothing runs nothing: the same answer as the decisions route
      // (docs/approvals.md#organisation-policies).
      c.header('Server-Timing', admissionTiming(c.var, startedAt))
      const voted: DecisionAccepted = { threadId: input.threadId, runId: input.runId, pending: admitted.pending }
      return c.json(voted, 202)
    }
    if (admitted.kind === 'steered') {
      // The running run takes it before its next model request; had it ended meanwhile, the queue starts it.
      void deps.queue.kick(threadId)
      const steered: RunSteered = { threadId: input.threadId, runId: admitted.runId, steered: true }
      return c.json(steered, 202)
    }
    if (admitted.kind === 'start') runs.start(admitted.plan)
    // Admission time (validation, ownership, resume checks, claim): from the turn, or once the body was read.
    c.header('Server-Timing', admissionTiming(c.var, startedAt))
    const { runId } = input
    const { closing } = deps
    const body = sseBody(
      (signal) =>
        logFrames(threadId, {
          store,
          hub,
          signal: closing ? AbortSignal.any([signal, closing]) : signal,
          runId,
          untilRunEnds: runId,
          ...(deps.turns && admitted.kind === 'start' ? { startAfter: () => deps.turns!.admissionsFirst() } : {}),
        }),
      { ...deps.sse, onEnd: takeStreamSlot(c) },
    )
    return c.body(body, 200, SSE_HEADERS)
  })
}
