import { errorFromFetch, errorFromResponse, InterludeError } from '@interlude/protocol'
import type {
  ForkCreated,
  ForkPoint,
  ForkRequest,
  ThreadListPage,
  ThreadParent,
  ThreadSummary,
} from '@interlude/protocol'
import { createHttpTransport } from '@interlude/react/core'
import type { Transport } from '@interlude/react/core'

/**
 * The server reads and writes of time travel (apps/workbench/README.md#time-travel): the signed-in principal's
 * threads, a thread's log (through the SDK's HTTP transport), its origin and its forks, and the fork itself. Plain
 * `fetch`, every request with the session's headers; every refusal is the protocol's `InterludeError`.
 */

/** Where a fork starts: after a message (up to and including it) or at the question a run paused with. */
export type ForkAt = ForkPoint

/** A thread's origin (`ThreadSnapshot.parent`, the fork answer's `parent`). */
export type ForkOrigin = ThreadParent

export type { ForkCreated }

/** One child of a thread (`GET …/threads/:threadId/forks`). */
export interface ForkChild {
  readonly threadId: string
  readonly at: ForkAt | undefined
  readonly createdAt: string | undefined
}

export type ForkBody = Omit<ForkRequest, 'threadId'>

export interface HistoryClientOptions {
  /** @default '/api/agent' */
  readonly baseUrl?: string
  /** Read before every request (the session token). */
  readonly headers?: () => Record<string, string>
  readonly fetch?: typeof fetch
}

export interface HistoryClient {
  /** The SDK transport over the same base and headers: `connect` reads the thread log. */
  readonly transport: Transport
  listThreads(options?: { readonly cursor?: string; readonly signal?: AbortSignal }): Promise<ThreadListPage>
  /** `ThreadSnapshot.parent` of a thread, `undefined` for a thread that is nobody's fork. */
  origin(threadId: string, signal?: AbortSignal): Promise<ForkOrigin | undefined>
  forks(threadId: string, signal?: AbortSignal): Promise<readonly ForkChild[]>
  fork(threadId: string, body: ForkBody): Promise<ForkCreated>
}

export function createHistoryClient(options: HistoryClientOptions = {}): HistoryClient {
  const base = (options.baseUrl ?? '/api/agent').replace(/\/+$/, '')
  const headers = () => options.headers?.() ?? {}
  const doFetch: typeof fetch = (...args) => (options.fetch ?? globalThis.fetch)(...args)
  const thread = (threadId: string) => `${base}/threads/${encodeURIComponent(threadId)}`

  async function json(path: string, init: RequestInit = {}): Promise<unknown> {
    let response: Response
    try {
      response = await doFetch(path, {
        credentials: 'same-origin',
        ...init,
        headers: { Accept: 'application/json', ...headers(), ...(init.headers as Record<string, string>) },
      })
    } catch (error) {
      throw errorFromFetch(error, init.signal ?? undefined)
    }
    if (!response.ok) throw await errorFromResponse(response)
    try {
      return await response.json()
    } catch (error) {
      throw new InterludeError('PROTOCOL_ERROR', 'The answer is not JSON.', {
        details: { reason: 'invalid_json' },
        cause: error,
      })
    }
  }

  return {
    transport: createHttpTransport({ baseUrl: base, headers, fetch: doFetch, credentials: 'same-origin' }),

    async listThreads({ cursor, signal } = {}) {
      const query = cursor === undefined ? '' : `?cursor=${encodeURIComponent(cursor)}`
      const body = await json(`${base}/threads${query}`, signal ? { signal } : {})
      const page = record(body)
      if (!Array.isArray(page.threads)) throw malformed('thread list')
      const threads = page.threads.filter(isThreadSummary)
      return typeof page.nextCursor === 'string' ? { threads, nextCursor: page.nextCursor } : { threads }
    },

    async origin(threadId, signal) {
      const snapshot = record(await json(thread(threadId), signal ? { signal } : {}))
      return forkOrigin(snapshot.parent)
    },

    async forks(threadId, signal) {
      const list = record(await json(`${thread(threadId)}/forks`, signal ? { signal } : {})).items
      if (!Array.isArray(list)) throw malformed('fork list')
      return list.flatMap((item): ForkChild[] => {
        const child = record(item)
        if (typeof child.threadId !== 'string') return []
        const createdAt = typeof child.createdAt === 'string' ? child.createdAt : undefined
        return [{ threadId: child.threadId, at: forkAt(child.at), createdAt }]
      })
    },

    async fork(threadId, body) {
      const answer = record(
        await json(`${thread(threadId)}/fork`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify(body),
        }),
      )
      const parent = forkOrigin(answer.parent)
      if (typeof answer.threadId !== 'string' || parent === undefined) throw malformed('fork answer')
      return { threadId: answer.threadId, parent }
    },
  }
}

type Rec = { readonly [key: string]: unknown }

function record(value: unknown): Rec {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Rec) : {}
}

function malformed(what: string): InterludeError {
  return new InterludeError('PROTOCOL_ERROR', `The ${what} is malformed.`, { details: { reason: 'invalid_answer' } })
}

function isThreadSummary(value: unknown): value is ThreadSummary {
  const t = record(value)
  return typeof t.threadId === 'string' && typeof t.status === 'string' && typeof t.updatedAt === 'string'
}

export function forkAt(value: unknown): ForkAt | undefined {
  const at = record(value)
  if (typeof at.messageId === 'string') return { messageId: at.messageId }
  if (typeof at.batchId === 'string') return { batchId: at.batchId }
  return undefined
}

function forkOrigin(value: unknown): ForkOrigin | undefined {
  const parent = record(value)
  const at = forkAt(parent.at)
  return typeof parent.threadId === 'string' && at !== undefined ? { threadId: parent.threadId, at } : undefined
}
