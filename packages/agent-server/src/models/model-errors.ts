import { InterludeError } from '@interlude/protocol'
import type { ModelErrorDetails, ModelErrorKind } from '@interlude/protocol'
import { defined } from '../defined.ts'

/**
 * Typed model failures (docs/protocol.md#model-errors): `MODEL_ERROR` with `details: { kind, retryable,
 * status? }`. The message is ours, per kind; the upstream error (its body may name keys, organisations or
 * prompts) is kept only as `cause`, which never leaves the process.
 */
const MESSAGES: Readonly<Record<ModelErrorKind, string>> = {
  auth: 'The model provider rejected the server’s credentials or configuration.',
  rate_limited: 'The model provider is rate limiting requests; try again later.',
  unavailable: 'The model provider is unavailable; try again later.',
  context_length: 'The conversation is too long for the model.',
  timeout: 'The model did not answer in time.',
  bad_request: 'The model provider rejected the request.',
  stream_reset: 'The model stream broke off before the answer was complete.',
  truncated: 'The model’s answer was cut off at its output limit; it was not kept.',
  content_filter: 'The model provider’s content filter stopped the answer; it was not kept.',
}

export function modelError(
  kind: ModelErrorKind,
  options: { retryable?: boolean; status?: number; timeout?: ModelErrorDetails['timeout']; cause?: unknown } = {},
): InterludeError {
  const details: ModelErrorDetails = {
    kind,
    retryable: options.retryable ?? DEFAULT_RETRYABLE[kind],
    ...defined({ status: options.status, timeout: options.timeout }),
  }
  return new InterludeError('MODEL_ERROR', MESSAGES[kind], { details, ...defined({ cause: options.cause }) })
}

const DEFAULT_RETRYABLE: Readonly<Record<ModelErrorKind, boolean>> = {
  auth: false,
  rate_limited: true,
  unavailable: true,
  context_length: false,
  timeout: true,
  bad_request: false,
  stream_reset: true,
  truncated: false,
  content_filter: false,
}

/** The fields of an `openai` `APIError` this module reads (duck-typed: `openai` is an optional peer). */
interface UpstreamError {
  readonly status?: unknown
  readonly code?: unknown
  readonly error?: unknown
  readonly name?: unknown
}

function upstreamCode(error: UpstreamError): string | undefined {
  if (typeof error.code === 'string') return error.code
  const inner = error.error as { code?: unknown } | undefined
  return typeof inner?.code === 'string' ? inner.code : undefined
}

/** The HTTP status of an SDK error, `undefined` for connection failures. */
export function statusOf(error: unknown): number | undefined {
  const status = (error as UpstreamError | undefined)?.status
  return typeof status === 'number' ? status : undefined
}

/**
 * Whether the failed request may be sent again at once (with back-off): 408, 409, 429 (but not an
 * exhausted quota), 5xx and connection failures — as the `openai` SDK decides, but in our own loop.
 */
export function isRetryableRequestError(error: unknown): boolean {
  const status = statusOf(error)
  if (status === undefined) return (error as UpstreamError | undefined)?.name === 'APIConnectionError'
  if (status === 429) return upstreamCode(error as UpstreamError) !== 'insufficient_quota'
  return status === 408 || status === 409 || status >= 500
}

/** A failed request (no stream yet) as a typed model error. */
export function requestError(error: unknown): InterludeError {
  const status = statusOf(error)
  if (status === undefined) return modelError('unavailable', { cause: error })
  const code = upstreamCode(error as UpstreamError)
  if (status === 401 || status === 403) return modelError('auth', { status, cause: error })
  if (status === 429)
    return code === 'insufficient_quota'
      ? modelError('rate_limited', { status, retryable: false, cause: error })
      : modelError('rate_limited', { status, cause: error })
  if (code === 'context_length_exceeded' || code === 'string_above_max_length')
    return modelError('context_length', { status, cause: error })
  if (status === 408 || status === 409 || status >= 500) return modelError('unavailable', { status, cause: error })
  if (status === 404) return modelError('auth', { status, cause: error })
  return modelError('bad_request', { status, cause: error })
}
