import type { Event as AgUiEvent } from '@ag-ui/core'
import { eventProblems } from '../event-shape.ts'
import type { SseDecodeOptions, SseFrame } from './decoder.ts'
import { decodeSseBatches, protocolError } from './decoder.ts'

export interface DecodedEvent {
  /** The frame's `id:` (the server's per-thread sequence), if any. */
  readonly id: string | undefined
  readonly lastEventId: string | undefined
  readonly event: AgUiEvent
}

export interface EventDecodeOptions extends SseDecodeOptions {
  /**
   * Replaces the built-in structural check, e.g. with the zod `EventSchema` from
   * `@interlude/protocol/schemas`. Must return the event or throw.
   */
  readonly validate?: (value: unknown) => AgUiEvent
}

function toEvent(frame: SseFrame, validate: EventDecodeOptions['validate']): DecodedEvent {
  let value: unknown
  try {
    value = JSON.parse(frame.data)
  } catch (error) {
    throw protocolError('invalid_json', 'SSE frame data is not JSON.', error)
  }
  let event: AgUiEvent
  if (validate) {
    try {
      event = validate(value)
    } catch (error) {
      throw protocolError('invalid_event', 'SSE frame is not a valid AG-UI event.', error)
    }
  } else {
    const problems = eventProblems(value)
    if (problems.length > 0) {
      throw protocolError(
        'invalid_event',
        `SSE frame is not a valid AG-UI event (${problems[0]!.path}: ${problems[0]!.problem}).`,
      )
    }
    event = value as AgUiEvent
  }
  return { id: frame.id, lastEventId: frame.lastEventId, event }
}

/**
 * SSE frames → AG-UI events, one array per input chunk. Every malformed frame is a typed
 * `PROTOCOL_ERROR`, never skipped; the valid events before it are delivered first.
 */
export async function* decodeEventBatches(
  source: ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>,
  options: EventDecodeOptions = {},
): AsyncGenerator<DecodedEvent[], void, undefined> {
  for await (const frames of decodeSseBatches(source, options)) {
    const out: DecodedEvent[] = []
    try {
      for (const frame of frames) out.push(toEvent(frame, options.validate))
    } catch (error) {
      if (out.length > 0) yield out
      throw error
    }
    yield out
  }
}

/** SSE frames → AG-UI events, one by one. Every malformed frame is a typed `PROTOCOL_ERROR`, never skipped. */
export async function* decodeEvents(
  source: ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>,
  options: EventDecodeOptions = {},
): AsyncGenerator<DecodedEvent, void, undefined> {
  for await (const batch of decodeEventBatches(source, options)) yield* batch
}
