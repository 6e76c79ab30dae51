import type { Event as AgUiEvent } from '@ag-ui/core'
import { eventProblems } from '../event-shape.ts'
import type { SseDecodeOptions } from './decoder.ts'
import { decodeSse, protocolError } from './decoder.ts'

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

/** SSE frames → AG-UI events. Every malformed frame is a typed `PROTOCOL_ERROR`, never skipped. */
export async function* decodeEvents(
  source: ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>,
  options: EventDecodeOptions = {},
): AsyncGenerator<DecodedEvent, void, undefined> {
  for await (const frame of decodeSse(source, options)) {
    let value: unknown
    try {
      value = JSON.parse(frame.data)
    } catch (error) {
      throw protocolError('invalid_json', 'SSE frame data is not JSON.', error)
    }
    let event: AgUiEvent
    if (options.validate) {
      try {
        event = options.validate(value)
      } catch (error) {
        throw protocolError('invalid_event', 'SSE frame is not a valid AG-UI event.', error)
      }
    } else {
      const problems = eventProblems(value)
      if (problems.length > 0) {
        throw protocolError('invalid_event', `SSE frame is not a valid AG-UI event (${problems[0]!.path}: ${problems[0]!.problem}).`)
      }
      event = value as AgUiEvent
    }
    yield { id: frame.id, lastEventId: frame.lastEventId, event }
  }
}
