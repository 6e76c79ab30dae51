import { EventType, InterludeError } from '@interlude/protocol'
import { encodeEvent, HEARTBEAT_FRAME } from '@interlude/protocol/sse'
import type { ServerConfig } from '../config/server-config.ts'

/** `heartbeatMs`: a `: ping` comment after this much silence (keeps proxies from closing idle streams). */
export interface SseBodyOptions extends Pick<ServerConfig, 'heartbeatMs' | 'logError'> {
  /** Counts the streams open now (the `interlude_open_streams` gauge). */
  readonly openStreams?: { inc(): void; dec(): void }
  /** Called once when the stream ends, fails, or is cancelled (the quota's open-stream slot, `takeStreamSlot`). */
  readonly onEnd?: (() => void) | undefined
}

/**
 * A ReadableStream over SSE frame chunks. Cancelling it (the client went away) only stops this
 * reader — the run itself keeps going and its events stay in the log.
 */
export function sseBody(
  open: (signal: AbortSignal) => AsyncGenerator<string, void, undefined>,
  options: SseBodyOptions,
): ReadableStream<Uint8Array> {
  const controller = new AbortController()
  const frames = open(controller.signal)
  const encoder = new TextEncoder()
  const { heartbeatMs } = options
  // Silence is elapsed time on this connection: the monotonic clock, not the server `Clock`
  // (which a test may move, and which leases and expiry read).
  let lastWrite = performance.now()
  let timer: ReturnType<typeof setInterval> | undefined
  let closed = false
  options.openStreams?.inc()
  const stop = () => {
    if (!closed) {
      options.openStreams?.dec()
      options.onEnd?.()
    }
    closed = true
    if (timer !== undefined) clearInterval(timer)
  }
  return new ReadableStream<Uint8Array>(
    {
      start(stream) {
        timer = setInterval(
          () => {
            if (closed || performance.now() - lastWrite < heartbeatMs) return
            lastWrite = performance.now()
            try {
              stream.enqueue(encoder.encode(HEARTBEAT_FRAME))
            } catch {
              stop()
            }
          },
          Math.max(10, Math.floor(heartbeatMs / 3)),
        )
        timer.unref?.()
      },
      async pull(stream) {
        try {
          const next = await frames.next()
          if (closed) return
          if (next.done) {
            stop()
            stream.close()
          } else {
            lastWrite = performance.now()
            stream.enqueue(encoder.encode(next.value))
          }
        } catch (error) {
          // Cannot change the status any more: end with a well-formed, generic RUN_ERROR frame.
          options.logError('event stream failed', error)
          stop()
          // A store that stopped answering is typed as such (docs/decisions.md#operating-it); anything else stays
          // generic.
          const unavailable = InterludeError.isInstance(error) && error.code === 'STORE_UNAVAILABLE'
          stream.enqueue(
            encoder.encode(
              encodeEvent(
                unavailable
                  ? { type: EventType.RUN_ERROR, code: 'STORE_UNAVAILABLE', message: error.message }
                  : { type: EventType.RUN_ERROR, code: 'INTERNAL', message: 'Internal error' },
              ),
            ),
          )
          stream.close()
        }
      },
      async cancel() {
        stop()
        controller.abort()
        await frames.return(undefined).catch(() => undefined)
      },
    },
    { highWaterMark: 1 },
  )
}
