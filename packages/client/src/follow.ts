import type { AgUiEvent } from '@interlude/protocol'
import { errorFromFetch, InterludeError } from '@interlude/protocol'
import { decodeEventBatches } from '@interlude/protocol/sse'
import type { BackoffOptions } from './backoff.ts'
import { backoffDelay, sleep } from './backoff.ts'
import type { HttpClient } from './http-client.ts'

/** One event of a followed thread: its `seq` in the thread's log (strictly increasing) and the event. */
export interface FollowedEvent {
  readonly id: number
  readonly event: AgUiEvent
}

export interface FollowOptions {
  /** The owner of another principal's thread (`?owner=`, docs/protocol.md#thread-ids). @default the caller */
  readonly owner?: string
  /** Start after this event id (`0`, the default, replays the whole log). */
  readonly after?: number
  /** Ends the iteration (quietly: the loop just finishes). */
  readonly signal?: AbortSignal
  /** Delays between reconnects. @default { initialMs: 250, maxMs: 5000 } */
  readonly backoff?: BackoffOptions
  /** Reconnects in a row without receiving anything before the last error is thrown. @default Infinity */
  readonly maxAttempts?: number
  /**
   * Silence (no frame, no `: ping`) after which the connection counts as dropped and is replaced. The
   * server pings after 15 s of silence (docs/protocol.md, "SSE framing"). `0` disables it. @default 45000
   */
  readonly idleTimeoutMs?: number
  /** Called before each reconnect, with the error that ended the connection (if any). */
  readonly onReconnect?: (info: {
    readonly attempt: number
    readonly after: number
    readonly error?: InterludeError
  }) => void
}

const ID = /^\d{1,15}$/
// A connection cut inside a frame or inside a multi-byte character: what a dropped connection looks like.
const CUT_REASONS: readonly unknown[] = ['truncated_frame', 'invalid_utf8']

/** Whether a connection that ended with `error` is worth opening again. */
function reconnectable(error: InterludeError): boolean {
  if (error.code === 'PROTOCOL_ERROR') return CUT_REASONS.includes((error.details as { reason?: unknown })?.reason)
  // RATE_LIMITED: a quota (open streams) or a proxy's 429, which the status table maps to it.
  return ['NETWORK_ERROR', 'STORE_UNAVAILABLE', 'THREAD_BUSY', 'RATE_LIMITED'].includes(error.code)
}

/**
 * Follows a thread's log across runs: `GET {base}/threads/:threadId/events?follow=1` (docs/approvals.md,
 * "Deciding without a chat stream"), decoded with the protocol's SSE decoder. A dropped, cut or silent
 * connection is opened again with `Last-Event-ID` after a bounded backoff, and events at or below the
 * last id delivered are skipped, so the consumer sees every event once, ids strictly increasing. Refusals
 * (`THREAD_NOT_FOUND`, `UNAUTHENTICATED`, …) and malformed streams are thrown; the signal ends it quietly.
 */
export async function* followThread(
  http: HttpClient,
  threadId: string,
  options: FollowOptions = {},
): AsyncGenerator<FollowedEvent, void, undefined> {
  const outer = options.signal
  const idleMs = options.idleTimeoutMs ?? 45_000
  const maxAttempts = options.maxAttempts ?? Number.POSITIVE_INFINITY
  let after = options.after ?? 0
  if (!Number.isSafeInteger(after) || after < 0) throw new InterludeError('INVALID_INPUT', 'after must be an event id.')
  let attempts = 0

  while (!outer?.aborted) {
    const connection = new AbortController()
    const stop = () => connection.abort()
    outer?.addEventListener('abort', stop, { once: true })
    let idle: ReturnType<typeof setTimeout> | undefined
    // Any frame or ping proves the connection alive and resets the reconnect budget. The timer is paused
    // while the consumer holds an event, so a slow consumer is not mistaken for a silent server.
    const pause = () => {
      if (idle !== undefined) clearTimeout(idle)
      idle = undefined
    }
    const arm = () => {
      pause()
      if (idleMs > 0) idle = setTimeout(stop, idleMs)
    }
    const heard = () => {
      attempts = 0
      arm()
    }
    let ended: InterludeError | undefined
    try {
      arm()
      const owner = options.owner === undefined ? '' : `&owner=${encodeURIComponent(options.owner)}`
      const path = `/threads/${encodeURIComponent(threadId)}/events?follow=1&after=${after}${owner}`
      const response = await http.open(
        path,
        { Accept: 'text/event-stream', 'Last-Event-ID': String(after) },
        connection.signal,
      )
      const type = response.headers.get('content-type') ?? ''
      if (!type.includes('text/event-stream') || !response.body) {
        await response.body?.cancel().catch(() => undefined)
        throw new InterludeError('PROTOCOL_ERROR', 'The answer is not an event stream.', {
          details: { reason: 'not_event_stream', contentType: type },
        })
      }
      const decode = { signal: connection.signal, onComment: heard }
      for await (const batch of decodeEventBatches(response.body, decode)) {
        attempts = 0
        pause()
        for (const decoded of batch) {
          // A frame without an id is not part of the log: the server could not read it (docs/protocol.md,
          // "SSE framing"). Reading again from the cursor is the cure.
          if (decoded.id === undefined) {
            throw new InterludeError('NETWORK_ERROR', 'The server could not read the thread log.', {
              details: { reason: 'log_read_failed' },
            })
          }
          if (!ID.test(decoded.id)) {
            throw new InterludeError('PROTOCOL_ERROR', 'An event id is not a log sequence number.', {
              details: { reason: 'invalid_event_id' },
            })
          }
          const id = Number(decoded.id)
          if (id <= after) continue
          after = id
          yield { id, event: decoded.event }
        }
        arm()
      }
      // The server or a proxy closed the stream (a restart, a timeout): it is followed again.
    } catch (error) {
      if (outer?.aborted) return
      // Our own idle timer aborted the request: a silent connection, replaced like a dropped one.
      ended = connection.signal.aborted
        ? new InterludeError('NETWORK_ERROR', 'The connection went silent.', { details: { reason: 'idle' } })
        : errorFromFetch(error)
      if (!reconnectable(ended)) throw ended
    } finally {
      pause()
      outer?.removeEventListener('abort', stop)
      connection.abort()
    }
    if (outer?.aborted) return
    if (attempts >= maxAttempts) {
      throw (
        ended ??
        new InterludeError('NETWORK_ERROR', 'The event stream kept closing.', { details: { reason: 'closed' } })
      )
    }
    options.onReconnect?.({ attempt: attempts + 1, after, ...(ended ? { error: ended } : {}) })
    if (!(await sleep(backoffDelay(attempts, options.backoff), outer))) return
    attempts += 1
  }
}
