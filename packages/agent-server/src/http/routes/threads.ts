import type { Hono, MiddlewareHandler } from 'hono'
import { InterludeError } from '@interlude/protocol'
import { SSE_HEADERS } from '@interlude/protocol/sse'
import type { ThreadListPage, ThreadStatus } from '@interlude/protocol'
import type { Clock } from '../../clock.ts'
import type { EventHub } from '../../core/log/event-hub.ts'
import type { DecisionRights } from '../../core/access/decision-rights.ts'
import type { RunRecovery } from '../../core/runs/recovery.ts'
import type { RunManager } from '../../core/runs/run-manager.ts'
import { logFrames } from '../../core/log/log-frames.ts'
import { accessibleThread } from '../../core/access/thread-access.ts'
import type { Audience } from '../../core/access/thread-access.ts'
import {
  decodeMessagesCursor,
  parseSnapshotLimit,
  threadSnapshot,
  threadSummary,
} from '../../core/access/thread-view.ts'
import type { ResultFromOf } from '../../core/access/thread-view.ts'
import type { Store, ThreadRecord } from '../../store/store.ts'
import type { ServerEnv } from '../env.ts'
import { takeStreamSlot } from '../middleware/quotas.ts'
import { requireJsonContentType } from '../middleware/json-body.ts'
import { parseAfter, parseFollow, parseLimit } from '../query-params.ts'
import type { SseBodyOptions } from '../sse-body.ts'
import { sseBody } from '../sse-body.ts'
import { addressedThread } from '../thread-address.ts'
import { threadKey } from '../../store/thread-key.ts'
import { defined } from '../../defined.ts'
import { registerRunEventRoutes } from './run-events.ts'

export interface ThreadRoutesDeps {
  readonly store: Store
  readonly hub: EventHub
  readonly runs: RunManager
  readonly recovery: RunRecovery
  readonly rights: DecisionRights
  readonly now: Clock
  readonly sse: SseBodyOptions
  /** Aborted when the server closes: ends followed event streams. */
  readonly closing: AbortSignal
  /** Bytes of message JSON in one snapshot page (`limits.snapshotPageBytes`). */
  readonly snapshotPageBytes: number
  /** Who may post an external tool's result besides the owner (the snapshot's `awaitingExternal`). */
  readonly resultFrom?: ResultFromOf
}

const STATUSES: readonly ThreadStatus[] = ['idle', 'running', 'interrupted']

function encodeCursor(thread: ThreadRecord): string {
  return Buffer.from(JSON.stringify([thread.updatedAt, thread.threadId]), 'utf8').toString('base64url')
}

function decodeCursor(cursor: string): { updatedAt: number; threadId: string } {
  try {
    const [updatedAt, threadId] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown[]
    if (typeof updatedAt === 'number' && typeof threadId === 'string') return { updatedAt, threadId }
  } catch {
    // fall through
  }
  throw new InterludeError('INVALID_INPUT', 'Invalid cursor.')
}

/**
 * Thread routes (docs/protocol.md): snapshot, event replay + live tail, explicit cancel, and the owner's
 * inbox. The snapshot and the events are also served to a principal who may decide on the thread
 * (docs/approvals.md); cancel and the thread list are the owner's. For anybody else the thread does not exist.
 */
export function registerThreadRoutes(
  app: Hono<ServerEnv>,
  basePath: string,
  auth: MiddlewareHandler<ServerEnv>,
  deps: ThreadRoutesDeps,
): void {
  const { store, hub, runs, now } = deps
  /** The thread, if the caller may use it, after first-touch recovery of a run whose process died. */
  const thread = (threadId: string, principal: string, audience: Audience): Promise<ThreadRecord> =>
    accessibleThread(deps, threadId, principal, audience)

  app.get(`${basePath}/threads`, auth, async (c) => {
    const status = c.req.query('status')
    if (status !== undefined && !STATUSES.includes(status as ThreadStatus)) {
      throw new InterludeError('INVALID_INPUT', 'status must be idle, running or interrupted.')
    }
    const limit = parseLimit(c.req.query('limit'))
    const cursor = c.req.query('cursor')
    const threads = await store.listThreads(c.get('principal'), {
      limit: limit + 1,
      ...defined({
        status: status as ThreadStatus | undefined,
        after: cursor === undefined ? undefined : decodeCursor(cursor),
      }),
      // The inbox lists threads whose batch can still be answered.
      ...(status === 'interrupted' ? { pendingInterruptsAt: now() } : {}),
    })
    const page = threads.slice(0, limit)
    const body: ThreadListPage = {
      threads: await Promise.all(page.map((t) => threadSummary(store, t, now()))),
      ...(threads.length > limit ? { nextCursor: encodeCursor(page[page.length - 1]!) } : {}),
    }
    return c.json(body)
  })

  app.get(`${basePath}/threads/:threadId`, auth, async (c) => {
    // Query checked before the thread is looked up: a bad cursor is refused the same for every thread.
    const limit = parseSnapshotLimit(c.req.query('limit'))
    const before = c.req.query('before')
    const beforePosition = before === undefined ? undefined : decodeMessagesCursor(before)
    const found = await thread(addressedThread(c, c.req.param('threadId')), c.get('principal'), 'readers')
    const page = { limit, maxBytes: deps.snapshotPageBytes, ...defined({ beforePosition }) }
    return c.json(await threadSnapshot(store, found, now(), page, deps.resultFrom))
  })

  app.get(`${basePath}/threads/:threadId/events`, auth, async (c) => {
    const principal = c.get('principal')
    const found = await thread(addressedThread(c, c.req.param('threadId')), principal, 'readers')
    const afterSeq = parseAfter(c.req.header('last-event-id') ?? c.req.query('after'))
    const follow = parseFollow(c.req.query('follow'))
    // HEAD reaches this GET route and its body is discarded: a stream made for it would never be read or cancelled.
    if (c.req.method === 'HEAD') return c.body(null, 200, SSE_HEADERS)
    const active = found.activeRunId
    // A reader who is not the owner keeps its right only while it may decide on the thread (docs/approvals.md).
    const mayContinue = async () => {
      const current = await store.getThread(found.threadId)
      return current !== undefined && (await deps.rights.mayRead(principal, current))
    }
    const body = sseBody(
      (signal) =>
        logFrames(found.threadId, {
          store,
          hub,
          afterSeq,
          ...(follow
            ? {
                follow,
                // Followed streams also end when the server closes.
                signal: AbortSignal.any([signal, deps.closing]),
                ...(found.ownerId !== principal ? { mayContinue } : {}),
              }
            : { signal, ...defined({ untilRunEnds: active }) }),
        }),
      { ...deps.sse, onEnd: takeStreamSlot(c) },
    )
    return c.body(body, 200, SSE_HEADERS)
  })

  app.post(`${basePath}/threads/:threadId/runs/:runId/cancel`, auth, requireJsonContentType, async (c) => {
    const principal = c.get('principal')
    const runId = c.req.param('runId')
    // Cancel is the owner's: the caller's own thread (src/store/thread-key.ts).
    const threadId = threadKey(principal, c.req.param('threadId'))
    // A cancel may overtake the admission of its run (a stop right after the request, even the one
    // that creates the thread): it is kept, and the run is cancelled when it is admitted here.
    const owned = await thread(threadId, principal, 'owner').catch(async (error: unknown) => {
      if (!(await store.getThread(threadId))) runs.cancelBeforeStart(threadId, runId, principal)
      throw error
    })
    let run = await store.getRun(owned.threadId, runId)
    // A queued input (docs/protocol.md#multitask) is removed from the queue; the others keep their order. Had it just
    // started, it is cancelled as the run it became.
    if (!run && (await store.removeQueuedInput?.(owned.threadId, runId))) {
      run = await store.getRun(owned.threadId, runId)
      if (!run) return c.json({ runId, status: 'cancelled', queued: true })
    }
    if (!run) {
      runs.cancelBeforeStart(owned.threadId, runId, principal)
      throw new InterludeError('RUN_NOT_FOUND', 'Run not found.')
    }
    if (run.status !== 'running') return c.json({ runId, status: run.status })
    // The flag in the store reaches the executing process wherever it is (its next lease renewal
    // or, with PostgreSQL, at once by NOTIFY); a local run is stopped directly as well, or as soon
    // as it starts here (admitted but not started yet).
    const flagged = await store.requestCancel(owned.threadId, runId, now())
    if (!runs.cancel(owned.threadId, runId)) runs.cancelBeforeStart(owned.threadId, runId, principal)
    if (flagged && flagged.status !== 'running') return c.json({ runId, status: flagged.status })
    return c.json({ runId, status: 'cancelling' }, 202)
  })

  // One run's own stream, also while it is queued (docs/protocol.md#multitask): owner and readers, like the events.
  registerRunEventRoutes(app, basePath, auth, { ...deps, thread: (id, principal) => thread(id, principal, 'readers') })
}
