import { encodeEvent, EventType } from '@interlude/protocol'

/**
 * A ReadableStream over SSE frame chunks. Cancelling it (the client went away) only stops this
 * reader — the run itself keeps going and its events stay in the log.
 */
export function sseBody(
  open: (signal: AbortSignal) => AsyncGenerator<string, void, undefined>,
  logError: (message: string, error: unknown) => void,
): ReadableStream<Uint8Array> {
  const controller = new AbortController()
  const frames = open(controller.signal)
  const encoder = new TextEncoder()
  return new ReadableStream<Uint8Array>(
    {
      async pull(stream) {
        try {
          const next = await frames.next()
          if (next.done) stream.close()
          else stream.enqueue(encoder.encode(next.value))
        } catch (error) {
          // Cannot change the status any more: end with a well-formed, generic RUN_ERROR frame.
          logError('event stream failed', error)
          stream.enqueue(encoder.encode(encodeEvent({ type: EventType.RUN_ERROR, code: 'INTERNAL', message: 'Internal error' })))
          stream.close()
        }
      },
      async cancel() {
        controller.abort()
        await frames.return(undefined).catch(() => undefined)
      },
    },
    { highWaterMark: 1 },
  )
}
