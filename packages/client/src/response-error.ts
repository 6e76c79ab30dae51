import type { ErrorCode } from '@interlude/protocol'
import { InterludeError } from '@interlude/protocol'

/**
 * The typed error of a non-2xx answer. The server's `{ error: { code, message, details } }` envelope
 * (docs/protocol.md, "Error codes") becomes an `InterludeError` with those fields; any other body (a
 * proxy's HTML page, a crash) becomes `NETWORK_ERROR` when a retry may help (5xx, 408, 429) and
 * `PROTOCOL_ERROR` otherwise. The body's text never becomes the message.
 */
export async function responseError(response: Response): Promise<InterludeError> {
  let body: unknown
  try {
    body = await response.json()
  } catch {
    body = undefined
  }
  const fromServer = InterludeError.fromEnvelope(body)
  if (fromServer) return fromServer
  const status = response.status
  const retryable = status >= 500 || status === 408 || status === 429
  const code: ErrorCode = retryable ? 'NETWORK_ERROR' : 'PROTOCOL_ERROR'
  return new InterludeError(code, `The server answered HTTP ${status} without an error envelope.`, {
    details: { reason: 'no_envelope', status },
  })
}

/** A failure of `fetch` itself or of reading a body: `ABORTED` when the caller's signal fired, else `NETWORK_ERROR`. */
export function transportError(error: unknown, signal: AbortSignal | undefined): InterludeError {
  if (InterludeError.isInstance(error)) return error
  if (signal?.aborted) return new InterludeError('ABORTED', 'The request was aborted.', { cause: error })
  return new InterludeError('NETWORK_ERROR', 'The connection failed.', { cause: error })
}
