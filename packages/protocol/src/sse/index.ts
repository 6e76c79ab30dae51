/**
 * `@interlude/protocol/sse`: the SSE codec of the AG-UI binding (docs/protocol.md#sse-framing), for servers and
 * transports. Apps read events through `@interlude/client` or `@interlude/react`, so it is not in the main entry.
 */
export {
  encodeComment,
  encodeEvent,
  encodeEventFrame,
  HEARTBEAT_FRAME,
  SSE_HEADERS,
  SseEncodeError,
} from './encoder.ts'
export { decodeSse, decodeSseBatches, DEFAULT_MAX_FRAME_SIZE } from './decoder.ts'
export type { ProtocolErrorReason, SseDecodeOptions, SseFrame } from './decoder.ts'
export { decodeEventBatches, decodeEvents } from './events.ts'
export type { DecodedEvent, EventDecodeOptions } from './events.ts'
