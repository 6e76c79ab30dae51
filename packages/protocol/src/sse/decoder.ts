import { createParser } from 'eventsource-parser'
import { InterludeError } from '../errors.ts'

/**
 * Streaming SSE decoder over `ReadableStream<Uint8Array>` built on eventsource-parser@3 (a small,
 * spec-complete parser: CR, LF and CRLF line ends, multi-line `data:`, comments, BOM).
 * This layer adds what a client needs on top: UTF-8 decoding across arbitrary byte splits
 * (fatal on invalid bytes), last-event-id tracking, a frame size cap and typed errors instead of
 * silent drops (a frame cut off by end of stream is reported, not discarded).
 */

export interface SseFrame {
  /** `id:` of this frame, if it had one. */
  readonly id: string | undefined
  /** The last event id seen so far on this stream (persists across frames without `id:`). */
  readonly lastEventId: string | undefined
  readonly event: string | undefined
  readonly data: string
}

export type ProtocolErrorReason =
  'frame_too_large' | 'invalid_utf8' | 'truncated_frame' | 'invalid_json' | 'invalid_event'

export interface SseDecodeOptions {
  /** Largest frame (characters buffered for one event) before a `PROTOCOL_ERROR`. @default 8 MiB */
  readonly maxFrameSize?: number
  readonly onComment?: (comment: string) => void
  readonly onRetry?: (ms: number) => void
  readonly signal?: AbortSignal
}

export const DEFAULT_MAX_FRAME_SIZE = 8 * 1024 * 1024

export function protocolError(reason: ProtocolErrorReason, message: string, cause?: unknown): InterludeError {
  return new InterludeError(
    'PROTOCOL_ERROR',
    message,
    cause === undefined ? { details: { reason } } : { details: { reason }, cause },
  )
}

type ByteSource = ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>

async function* chunksOf(source: ByteSource, signal?: AbortSignal): AsyncGenerator<Uint8Array> {
  if (typeof (source as ReadableStream<Uint8Array>).getReader === 'function') {
    const reader = (source as ReadableStream<Uint8Array>).getReader()
    const onAbort = () => void reader.cancel().catch(() => undefined)
    signal?.addEventListener('abort', onAbort, { once: true })
    try {
      for (;;) {
        const { done, value } = await reader.read()
        if (done) return
        yield value
      }
    } finally {
      signal?.removeEventListener('abort', onAbort)
      // Release (or cancel) the body when the consumer stops early.
      await reader.cancel().catch(() => undefined)
      reader.releaseLock()
    }
  } else {
    for await (const chunk of source as AsyncIterable<Uint8Array>) yield chunk
  }
}

/**
 * Decodes SSE frames in batches: one array per input chunk (possibly empty chunks are skipped).
 * High-throughput consumers iterate batches to pay the async-iteration cost per chunk, not per event.
 * Throws `InterludeError('PROTOCOL_ERROR')` with a typed `details.reason`.
 */
export async function* decodeSseBatches(
  source: ByteSource,
  options: SseDecodeOptions = {},
): AsyncGenerator<SseFrame[], void, undefined> {
  const maxFrameSize = options.maxFrameSize ?? DEFAULT_MAX_FRAME_SIZE
  let batch: SseFrame[] = []
  let lastEventId: string | undefined
  let failure: InterludeError | undefined
  const tooLarge = (cause?: unknown) =>
    (failure ??= protocolError('frame_too_large', `SSE frame exceeds ${maxFrameSize} characters.`, cause))
  const parser = createParser({
    maxBufferSize: maxFrameSize,
    onEvent: (message) => {
      // The SSE last-event-ID persists across frames without their own `id:` (eventsource-parser 3
      // has no `onId`; an id-only frame without data is not dispatched by it).
      if (message.id !== undefined) lastEventId = message.id
      if (message.data.length > maxFrameSize) tooLarge()
      else batch.push({ id: message.id, lastEventId, event: message.event, data: message.data })
    },
    ...(options.onComment ? { onComment: options.onComment } : {}),
    ...(options.onRetry ? { onRetry: options.onRetry } : {}),
    onError: (error) => {
      // Unknown fields and invalid `retry:` are ignored, as the SSE specification requires.
      if (error.type === 'max-buffer-size-exceeded') tooLarge(error)
    },
  })
  const decoder = new TextDecoder('utf-8', { fatal: true })
  const decode = (bytes: Uint8Array | undefined): string => {
    try {
      return bytes === undefined ? decoder.decode() : decoder.decode(bytes, { stream: true })
    } catch (error) {
      throw protocolError('invalid_utf8', 'SSE stream is not valid UTF-8.', error)
    }
  }
  const take = (): SseFrame[] => {
    const out = batch
    batch = []
    return out
  }

  for await (const chunk of chunksOf(source, options.signal)) {
    const text = decode(chunk)
    if (text.length === 0) continue
    parser.feed(text)
    // Frames decoded before a failure are still delivered, then the failure is thrown.
    if (batch.length > 0) yield take()
    if (failure) throw failure
  }
  const tail = decode(undefined)
  if (tail.length > 0) parser.feed(tail)
  if (batch.length > 0) yield take()
  if (failure) throw failure
  // A frame still being assembled at end of stream would be dropped silently by the spec's
  // algorithm. Terminate it to find out whether there was one, and report it instead.
  parser.feed('\n\n')
  if (batch.length > 0) throw protocolError('truncated_frame', 'SSE stream ended inside a frame.')
  if (failure) throw failure
}

/** Decodes SSE frames one by one. Throws `InterludeError('PROTOCOL_ERROR')` with a typed `details.reason`. */
export async function* decodeSse(
  source: ByteSource,
  options: SseDecodeOptions = {},
): AsyncGenerator<SseFrame, void, undefined> {
  for await (const batch of decodeSseBatches(source, options)) yield* batch
}
