/**
 * SSE encoder for the AG-UI binding (docs/protocol.md): `id: <seq>\ndata: <json>\n\n`, LF only, no
 * `event:` lines. JSON.stringify never emits a raw CR or LF, so one `data:` line per event.
 */

export class SseEncodeError extends TypeError {
  constructor(message: string) {
    super(message)
    this.name = 'SseEncodeError'
  }
}

function checkId(id: string): void {
  // A CR or LF in an id would let a value inject extra SSE fields (Hono f4123ed9).
  if (/[\r\n\0]/.test(id)) throw new SseEncodeError('SSE id must not contain CR, LF or NUL.')
}

/** One event frame. `id` is the per-thread sequence (omit for frames that are not in the log). */
export function encodeEventFrame(json: string, id?: string | number): string {
  if (/[\r\n]/.test(json)) throw new SseEncodeError('SSE data must be single-line JSON.')
  if (id === undefined) return `data: ${json}\n\n`
  const text = typeof id === 'number' ? String(id) : id
  checkId(text)
  if (text.length === 0) throw new SseEncodeError('SSE id must not be empty.')
  return `id: ${text}\ndata: ${json}\n\n`
}

/** Serialises a value and frames it. */
export function encodeEvent(event: unknown, id?: string | number): string {
  const json = JSON.stringify(event)
  if (json === undefined) throw new SseEncodeError('Event is not serialisable as JSON.')
  return encodeEventFrame(json, id)
}

/** A comment frame (ignored by every SSE consumer), e.g. the `: ping` heartbeat. */
export function encodeComment(text: string): string {
  return text
    .split(/\r\n|\r|\n/)
    .map((line) => `: ${line}\n`)
    .join('')
    .concat('\n')
}

/** The heartbeat sent every 15 s while a stream is idle. */
export const HEARTBEAT_FRAME = ': ping\n\n'

/** Headers for every SSE response (docs/protocol.md). */
export const SSE_HEADERS: Readonly<Record<string, string>> = {
  'Content-Type': 'text/event-stream; charset=utf-8',
  'Cache-Control': 'no-cache, no-transform',
  'X-Accel-Buffering': 'no',
  Connection: 'keep-alive',
}
