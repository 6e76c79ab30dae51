import type { Hono, MiddlewareHandler } from 'hono'
import { InterludeError } from '@interlude/protocol'
import { SSE_HEADERS } from '@interlude/protocol/sse'
import type { EventHub } from '../../core/log/event-hub.ts'
import { logFrames } from '../../core/log/log-frames.ts'
import type { Store } from '../../store/store.ts'
import type { ServerEnv } from '../env.ts'
import { takeStreamSlot } from '../middleware/quotas.ts'
import { parseAfter } from '../query-params.ts'
import type { SseBodyOptions } from '../sse-body.ts'
import { sseBody } from '../sse-body.ts'
import { addressedThread } from '../thread-address.ts'
import type { ThreadRoutesDeps } from './threads.ts'

/** How often a stream waiting for a queued run looks again without a wake-up (a cancel of it appends nothing). */
const RECHECK_MS = 1000

type Wait = 'started' | 'gone'

/**
 * `started`: the run exists; `gone`: it is neither a run nor queued any more (cancelled, dropped, taken as a steer).
 * A queued input becomes its run in one write (the row removed, the run inserted), so when the row is gone the run is
 * read once more: a start between the two first reads is `started`, not `gone`.
 */
export async function whereIs(store: Store, threadId: string, runId: string): Promise<Wait | 'queued'> {
  if (await store.getRun(threadId, runId)) return 'started'
  const queued = await store.listQueuedInputs?.(threadId)
  if (queued?.some((q) => q.runId === runId)) return 'queued'
  return (await store.getRun(threadId, runId)) ? 'started' : 'gone'
}

/** Waits while the run is queued: woken by the thread's log (its RUN_STARTED, from any process) or a recheck. */
async function untilStarted(store: Store, hub: EventHub, threadId: string, runId: string, signal: AbortSignal) {
  let wake: (() => void) | undefined
  const unsubscribe = hub.subscribe(threadId, () => wake?.())
  const onAbort = () => wake?.()
  signal.addEventListener('abort', onAbort)
  try {
    for (;;) {
      const where = await whereIs(store, threadId, runId)
      if (where !== 'queued' || signal.aborted) return where
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, RECHECK_MS)
        wake = () => {
          clearTimeout(timer)
          resolve()
        }
      })
      wake = undefined
    }
  } finally {
    signal.removeEventListener('abort', onAbort)
    unsubscribe()
  }
}

/**
 * `GET {base}/threads/:threadId/runs/:runId/events` (docs/protocol.md#get-basethreadsthreadidrunsrunidevents): one
 * run's own stream, attachable by its runId — also while it is queued, so a client that got `202 { runId, queued }`
 * can wait for it. Its events from the log (after `Last-Event-ID`), then live, ending with its terminal event.
 */
export function registerRunEventRoutes(
  app: Hono<ServerEnv>,
  basePath: string,
  auth: MiddlewareHandler<ServerEnv>,
  deps: Pick<ThreadRoutesDeps, 'store' | 'hub' | 'closing'> & {
    readonly sse: SseBodyOptions
    readonly thread: (threadId: string, principal: string) => Promise<{ readonly threadId: string }>
  },
): void {
  const { store, hub } = deps
  app.get(`${basePath}/threads/:threadId/runs/:runId/events`, auth, async (c) => {
    const found = await deps.thread(addressedThread(c, c.req.param('threadId')), c.get('principal'))
    const runId = c.req.param('runId')
    const afterSeq = parseAfter(c.req.header('last-event-id') ?? c.req.query('after'))
    const { threadId } = found
    if ((await whereIs(store, threadId, runId)) === 'gone')
      throw new InterludeError('RUN_NOT_FOUND', 'Run not found.', { details: { runId } })
    if (c.req.method === 'HEAD') return c.body(null, 200, SSE_HEADERS)
    const body = sseBody(
      async function* (signal) {
        const stop = AbortSignal.any([signal, deps.closing])
        if ((await untilStarted(store, hub, threadId, runId, stop)) !== 'started') return
        yield* logFrames(threadId, { store, hub, signal: stop, runId, untilRunEnds: runId, afterSeq })
      },
      { ...deps.sse, onEnd: takeStreamSlot(c) },
    )
    return c.body(body, 200, SSE_HEADERS)
  })
}
