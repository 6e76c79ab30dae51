import { errorFromFetch } from '@interlude/protocol'
import type { TransportEvent } from '@interlude/react/core'
import type { Recording } from '../recording/recording-types.ts'
import { toRecordedError } from '../recording/to-json.ts'
import type { RecordedError } from '../recording/recording-types.ts'
import type { HistoryClient } from './history-client.ts'
import { LogRecording } from './log-recording.ts'

/**
 * Events applied per step: the server reads its log in pages of this size (`REPLAY_PAGE_EVENTS` in the agent server's
 * `log-frames.ts`) and sends the next page only when this reader has taken the previous one, so neither side holds
 * more than a page of raw events; between pages the page gets a turn to paint the progress.
 */
export const LOG_PAGE_EVENTS = 128

/** Reads after a dropped connection (each from the last sequence read, `?after=`) before giving up. */
const MAX_REREADS = 3

export interface ReadProgress {
  readonly events: number
  readonly lastSeq: string | undefined
}

export interface ReadThreadLogOptions {
  readonly title: string
  /** Aborting stops reading; what was read so far is kept (`complete: false`). */
  readonly signal?: AbortSignal
  readonly onProgress?: (progress: ReadProgress) => void
  readonly maxFrames?: number
  readonly wallClock?: () => number
}

export interface ThreadLogRead {
  readonly recording: Recording
  /** The log was read up to date (for a thread with a run in progress: until that run ended). */
  readonly complete: boolean
  /** The frame limit was reached: the rest of the log was not read. */
  readonly truncated: boolean
  readonly events: number
  /** Why reading stopped early, when the server or the network refused. */
  readonly error: RecordedError | undefined
}

/**
 * Reads a stored thread from its server log (`GET {base}/threads/:threadId/events?after=<seq>`, the SDK transport's
 * `connect`) into a recording, page by page; a dropped read goes on after the last sequence it had. The stream ends
 * by itself once the log is read up to date (a thread with a run in progress: once that run ends).
 */
export async function readThreadLog(
  client: HistoryClient,
  threadId: string,
  options: ReadThreadLogOptions,
): Promise<ThreadLogRead> {
  const { signal } = options
  const log = new LogRecording({
    threadId,
    title: options.title,
    ...(options.maxFrames === undefined ? {} : { maxFrames: options.maxFrames }),
    ...(options.wallClock === undefined ? {} : { wallClock: options.wallClock }),
  })
  const stop = new AbortController()
  const onAbort = () => stop.abort()
  signal?.addEventListener('abort', onAbort, { once: true })
  if (signal?.aborted) stop.abort()
  let complete = false
  let error: RecordedError | undefined
  try {
    for (let reads = 0; !stop.signal.aborted; reads++) {
      const requestId = log.startRead()
      let received = 0
      try {
        const source = client.transport.connect(threadId, { lastEventId: log.lastSeq, signal: stop.signal })
        for await (const page of pages(source)) {
          if (received === 0) log.answered(requestId)
          received += page.length
          log.addEvents(requestId, page)
          options.onProgress?.({ events: log.eventCount, lastSeq: log.lastSeq })
          // The frame limit ends the read: holding more would defeat it.
          if (log.truncated) stop.abort()
          else await yieldToPage(stop.signal)
        }
        if (stop.signal.aborted) throw new DOMException('stopped', 'AbortError')
        log.endRead(requestId, 'complete', received)
        complete = true
        break
      } catch (raw) {
        const failure = errorFromFetch(raw, stop.signal)
        if (stop.signal.aborted) {
          log.endRead(requestId, 'aborted', received)
          break
        }
        const recorded = toRecordedError(failure)
        log.endRead(requestId, failure.code === 'NETWORK_ERROR' ? 'network-error' : 'http-error', received, recorded)
        if (!failure.retryable || reads + 1 >= MAX_REREADS) {
          error = recorded
          break
        }
      }
    }
  } finally {
    signal?.removeEventListener('abort', onAbort)
  }
  const state = complete ? 'read up to date' : log.truncated ? 'cut at the frame limit' : 'read in part'
  return {
    recording: log.toRecording(
      `Read from the server's log of thread ${threadId} (${log.eventCount} events, ${state}); times are synthetic.`,
    ),
    complete,
    truncated: log.truncated,
    events: log.eventCount,
    error,
  }
}

/** Regroups the transport's network-read batches into pages of at most `LOG_PAGE_EVENTS`. */
async function* pages(
  source: AsyncIterable<readonly TransportEvent[]>,
): AsyncGenerator<readonly TransportEvent[], void, undefined> {
  for await (const batch of source)
    for (let start = 0; start < batch.length; start += LOG_PAGE_EVENTS)
      yield batch.slice(start, start + LOG_PAGE_EVENTS)
}

/** A macrotask turn between pages, so that a long log does not freeze the page while it is read. */
function yieldToPage(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve()
    else setTimeout(resolve, 0)
  })
}
