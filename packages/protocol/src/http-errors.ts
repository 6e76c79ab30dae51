import type { ErrorCode } from './errors.ts'
import { InterludeError } from './errors.ts'

/**
 * The one mapping from an HTTP answer to an `InterludeError`, shared by every client (docs/protocol.md#error-codes).
 * A known code in the `{ error: { code, message, details? } }` envelope always wins; without one the status decides,
 * and the body's text never becomes the message.
 */

/**
 * Statuses with a code of their own when the answer has no envelope; each is the code whose status in `ERROR_CODES`
 * it is, except 403 (no code of its own: refused credentials) and 408 (a timeout a retry may heal).
 * Any other 4xx is `INVALID_INPUT`, any 5xx `NETWORK_ERROR` (a proxy's page or a crash), anything else
 * `PROTOCOL_ERROR`.
 */
const STATUS_CODES: Readonly<Record<number, ErrorCode>> = {
  400: 'INVALID_INPUT',
  401: 'UNAUTHENTICATED',
  403: 'UNAUTHENTICATED',
  404: 'NOT_FOUND',
  408: 'NETWORK_ERROR',
  413: 'PAYLOAD_TOO_LARGE',
  429: 'RATE_LIMITED',
}

/** An error envelope is small; a larger body is a page or a dump, never read whole. */
export const MAX_ERROR_BODY_BYTES = 64 * 1024

/** The code of a non-2xx answer without a usable envelope. */
export function statusErrorCode(status: number): ErrorCode {
  return (
    STATUS_CODES[status] ??
    (status >= 500 && status < 600
      ? 'NETWORK_ERROR'
      : status >= 400 && status < 500
        ? 'INVALID_INPUT'
        : 'PROTOCOL_ERROR')
  )
}

/**
 * The error of a non-2xx answer from its status and its parsed body (`undefined` when there was none or it was not
 * JSON). Without a known envelope: `details: { reason: 'no_envelope', status }`.
 */
export function errorFromStatus(status: number, body?: unknown): InterludeError {
  return (
    InterludeError.fromEnvelope(body) ??
    new InterludeError(statusErrorCode(status), `The server answered HTTP ${status} without an error envelope.`, {
      details: { reason: 'no_envelope', status },
    })
  )
}

/**
 * Reads a non-2xx `Response` (at most `MAX_ERROR_BODY_BYTES` of it; the rest is cancelled) and maps it with
 * `errorFromStatus`. Never rejects: a body that cannot be read or parsed counts as no envelope.
 */
export async function errorFromResponse(response: Response): Promise<InterludeError> {
  let body: unknown
  const reader = response.body?.getReader()
  try {
    // TextDecoder, not Blob: a Blob of another realm's bytes (jsdom) reads as garbage.
    const decoder = new TextDecoder()
    let text = ''
    let size = 0
    for (let read; reader && !(read = await reader.read()).done;) {
      if ((size += read.value.byteLength) > MAX_ERROR_BODY_BYTES) throw new RangeError('error body too large')
      text += decoder.decode(read.value, { stream: true })
    }
    body = JSON.parse(text + decoder.decode())
  } catch {
    // Too large, cut, aborted or not JSON (an empty body too): no envelope. Stop the download of what is left.
    reader?.cancel().catch(() => undefined)
  }
  return errorFromStatus(response.status, body)
}

/**
 * A failure of `fetch` itself or of reading a body: `ABORTED` when the caller's signal fired (or the error is an
 * abort), else `NETWORK_ERROR`. The original stays in `cause`; an `InterludeError` is returned as it is.
 */
export function errorFromFetch(error: unknown, signal?: AbortSignal): InterludeError {
  if (InterludeError.isInstance(error)) return error
  return signal?.aborted || (error as { name?: unknown } | null)?.name === 'AbortError'
    ? new InterludeError('ABORTED', 'The request was aborted.', { cause: error })
    : new InterludeError('NETWORK_ERROR', 'The connection failed.', { cause: error })
}
