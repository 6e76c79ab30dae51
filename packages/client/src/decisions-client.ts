import type {
  DecisionAccepted,
  DecisionRequest,
  ForkCreated,
  ForkRequest,
  PendingBatch,
  PendingBatchPage,
  Grant,
  PermissionRule,
  ResumeEntry,
  RunView,
  ThreadFork,
  ThreadSnapshot,
} from '@interlude/protocol'
import { InterludeError } from '@interlude/protocol'
import {
  isDecisionAccepted,
  isForkCreated,
  isPendingBatchPage,
  isGrantList,
  isPermissionRuleList,
  isRunView,
  isThreadForkList,
  isThreadSnapshot,
} from './answer-guards.ts'
import type { BackoffOptions } from './backoff.ts'
import { backoffDelay, sleep } from './backoff.ts'
import type { DecisionsClientOptions } from './client-options.ts'
import type { FollowedEvent, FollowOptions } from './follow.ts'
import { followThread } from './follow.ts'
import { createHttpClient } from './http-client.ts'
import { newRunId } from './run-id.ts'

export interface PendingOptions {
  /** 1–100 (the server's default is 20). */
  readonly limit?: number
  /** `nextCursor` of the previous page. */
  readonly cursor?: string
  readonly signal?: AbortSignal
}

/**
 * Whose thread a call addresses (docs/protocol.md#thread-ids): thread ids are per owner, so a decider or reader names
 * the owner of another principal's thread (`PendingBatch.owner`, a webhook's `owner`). @default the caller
 */
export interface ThreadOwnerOption {
  readonly owner?: string
}

export interface DecideOptions extends ThreadOwnerOption {
  /**
   * The idempotency key (docs/protocol.md, "Idempotency"). Sending the same `runId` with the same entries
   * again answers `202` with the same run, so a caller that does not know whether a decision arrived sends
   * it again unchanged. @default `run_<uuid>`, generated per `decide` call and reused by its retries
   */
  readonly runId?: string
  /** One entry per interrupt of the open batch; see `approveAll`, `denyAll`, `cancelAll`. */
  readonly resume: readonly ResumeEntry[]
  readonly signal?: AbortSignal
  /**
   * Sends again, with the same `runId`, after a `NETWORK_ERROR`, `STORE_UNAVAILABLE` or `RATE_LIMITED` (the answer
   * was lost, the store was away, a quota was used up). @default 2 retries, backoff 250 ms … 5 s
   */
  readonly retries?: number
  readonly backoff?: BackoffOptions
}

export interface WaitForRunOptions extends ThreadOwnerOption {
  readonly signal?: AbortSignal
  /** Delay between two polls of the run status. @default 500 */
  readonly pollMs?: number
}

export interface PermissionRulesOptions {
  /** Only the rules that apply in this thread: the principal-wide ones and this thread's. */
  readonly threadId?: string
  readonly signal?: AbortSignal
}

/** `fork(threadId, options)`: the body of the fork route (docs/time-travel.md) and an abort signal. */
export interface ForkOptions extends ForkRequest {
  readonly signal?: AbortSignal
}

export interface DecisionsClient {
  /** One page of the open batches the caller may decide, newest first (`GET {base}/interrupts?status=pending`). */
  pending(options?: PendingOptions): Promise<PendingBatchPage>
  /** Every page, following `nextCursor` until the last one. */
  pendingPages(options?: Omit<PendingOptions, 'cursor'>): AsyncIterable<PendingBatchPage>
  /** Every open batch, page after page. */
  pendingBatches(options?: Omit<PendingOptions, 'cursor'>): AsyncIterable<PendingBatch>
  /** Answers the thread's open batch (`POST {base}/threads/:threadId/decisions`); the turn continues in background. */
  decide(threadId: string, options: DecideOptions): Promise<DecisionAccepted>
  /** The status of a run (`GET {base}/threads/:threadId/runs/:runId`), with its decision record for a resume run. */
  run(
    threadId: string,
    runId: string,
    options?: ThreadOwnerOption & { readonly signal?: AbortSignal },
  ): Promise<RunView>
  /** Polls `run` until the run is no longer `running`. Throws `ABORTED` when the signal aborts. */
  waitForRun(threadId: string, runId: string, options?: WaitForRunOptions): Promise<RunView>
  /** The thread's snapshot (`GET {base}/threads/:threadId`): messages, state, open batch, decision records. */
  snapshot(threadId: string, options?: ThreadOwnerOption & { readonly signal?: AbortSignal }): Promise<ThreadSnapshot>
  /**
   * The caller's active remembered permissions, oldest first (`GET {base}/permission-rules`,
   * docs/approvals.md#remembered-permissions).
   */
  listPermissionRules(options?: PermissionRulesOptions): Promise<readonly PermissionRule[]>
  /**
   * Revokes one of the caller's rules (`DELETE {base}/permission-rules/:ruleId`); the next matching call asks again.
   * An unknown, already revoked or another principal's rule is `NOT_FOUND`.
   */
  revokePermissionRule(ruleId: string, options?: { readonly signal?: AbortSignal }): Promise<void>
  /**
   * The caller's bounded grants that may still apply (calls left, not expired, not revoked), oldest first, with
   * `callsLeft` and `until` (`GET {base}/grants`, docs/approvals.md#bounded-grants).
   */
  listGrants(options?: PermissionRulesOptions): Promise<readonly Grant[]>
  /**
   * Revokes one of the caller's grants (`DELETE {base}/grants/:grantId`); the next matching call asks again. An unknown,
   * used-up, expired, already revoked or another principal's grant is `NOT_FOUND`.
   */
  revokeGrant(grantId: string, options?: { readonly signal?: AbortSignal }): Promise<void>
  /**
   * Forks the caller's thread (`POST {base}/threads/:threadId/fork`, docs/time-travel.md): a new thread with the history
   * up to `at` (a message, or paused at a batch by its `batchId`), optionally with that user message edited. Nothing
   * copied runs again. Not retried: a retry without `threadId` could make a second fork.
   */
  fork(threadId: string, options: ForkOptions): Promise<ForkCreated>
  /** The forks of the caller's thread, oldest first (`GET {base}/threads/:threadId/forks`). */
  forks(threadId: string, options?: { readonly signal?: AbortSignal }): Promise<readonly ThreadFork[]>
  /** The thread's events across runs, reconnecting after a dropped connection (see `FollowOptions`). */
  follow(threadId: string, options?: FollowOptions): AsyncIterable<FollowedEvent>
}

const aborted = () => new InterludeError('ABORTED', 'The request was aborted.')
const thread = (threadId: string) => `/threads/${encodeURIComponent(threadId)}`
/** The `?owner=` of a call on another principal's thread (nothing for the caller's own). */
const ownerQuery = (owner: string | undefined) => (owner === undefined ? '' : `?owner=${encodeURIComponent(owner)}`)
const threadQuery = (threadId: string | undefined) =>
  threadId === undefined ? '' : `?${new URLSearchParams({ threadId })}`

/**
 * A typed client of the decisions API for bots and scripts (docs/approvals.md). Fetch only: it runs in
 * browsers, Deno, Workers and Node ≥ 20. Every non-2xx answer is an `InterludeError` with the server's
 * `code`, `message` and `details`; transport failures are `NETWORK_ERROR`, aborts `ABORTED`.
 * @example
 * const client = createDecisionsClient({ baseUrl: 'https://agents.example.com/api/agent', token })
 * for await (const batch of client.pendingBatches()) await client.decide(batch.threadId, { resume: approveAll(batch) })
 */
export function createDecisionsClient(options: DecisionsClientOptions): DecisionsClient {
  const http = createHttpClient(options)

  const client: DecisionsClient = {
    pending({ limit, cursor, signal } = {}) {
      const query = new URLSearchParams({ status: 'pending' })
      if (limit !== undefined) query.set('limit', String(limit))
      if (cursor !== undefined) query.set('cursor', cursor)
      return http.json({ method: 'GET', path: `/interrupts?${query}`, signal }, isPendingBatchPage, 'inbox page')
    },

    async *pendingPages(options = {}) {
      let cursor: string | undefined
      do {
        const page = await client.pending(cursor === undefined ? options : { ...options, cursor })
        yield page
        cursor = page.nextCursor
      } while (cursor !== undefined)
    },

    async *pendingBatches(options = {}) {
      for await (const page of client.pendingPages(options)) yield* page.items
    },

    async decide(threadId, { runId = newRunId(), resume, signal, retries = 2, backoff, owner }) {
      const body: DecisionRequest = { runId, resume }
      const path = `${thread(threadId)}/decisions${ownerQuery(owner)}`
      const request = { method: 'POST', path, body, signal } as const
      for (let attempt = 0; ; attempt++) {
        try {
          return await http.json(request, isDecisionAccepted, 'decision answer')
        } catch (error) {
          const code = InterludeError.isInstance(error) ? error.code : undefined
          // Safe because the runId is the same: the server admits a decision once (docs/protocol.md).
          const again = code === 'NETWORK_ERROR' || code === 'STORE_UNAVAILABLE' || code === 'RATE_LIMITED'
          if (!again || attempt >= retries) throw error
          if (!(await sleep(backoffDelay(attempt, backoff), signal))) throw aborted()
        }
      }
    },

    run(threadId, runId, { signal, owner } = {}) {
      const path = `${thread(threadId)}/runs/${encodeURIComponent(runId)}${ownerQuery(owner)}`
      return http.json({ method: 'GET', path, signal }, isRunView, 'run view')
    },

    async waitForRun(threadId, runId, { signal, pollMs = 500, owner } = {}) {
      for (;;) {
        const view = await client.run(threadId, runId, {
          ...(signal ? { signal } : {}),
          ...(owner !== undefined ? { owner } : {}),
        })
        if (view.status !== 'running') return view
        if (!(await sleep(pollMs, signal))) throw aborted()
      }
    },

    snapshot(threadId, { signal, owner } = {}) {
      const path = `${thread(threadId)}${ownerQuery(owner)}`
      return http.json({ method: 'GET', path, signal }, isThreadSnapshot, 'thread snapshot')
    },

    async listPermissionRules({ threadId, signal } = {}) {
      const path = `/permission-rules${threadQuery(threadId)}`
      const list = await http.json({ method: 'GET', path, signal }, isPermissionRuleList, 'permission rule list')
      return list.items
    },

    revokePermissionRule(ruleId, { signal } = {}) {
      return http.empty({ method: 'DELETE', path: `/permission-rules/${encodeURIComponent(ruleId)}`, signal })
    },

    async listGrants({ threadId, signal } = {}) {
      const path = `/grants${threadQuery(threadId)}`
      return (await http.json({ method: 'GET', path, signal }, isGrantList, 'grant list')).items
    },

    revokeGrant(grantId, { signal } = {}) {
      return http.empty({ method: 'DELETE', path: `/grants/${encodeURIComponent(grantId)}`, signal })
    },

    fork(threadId, { signal, ...request }) {
      const body: ForkRequest = request
      return http.json({ method: 'POST', path: `${thread(threadId)}/fork`, body, signal }, isForkCreated, 'fork answer')
    },

    async forks(threadId, { signal } = {}) {
      const path = `${thread(threadId)}/forks`
      return (await http.json({ method: 'GET', path, signal }, isThreadForkList, 'fork list')).items
    },

    follow(threadId, followOptions = {}) {
      return followThread(http, threadId, followOptions)
    },
  }
  return client
}
