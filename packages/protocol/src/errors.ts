/**
 * One error type for every package: `InterludeError` with a `code` from one union and a `cause`.
 * One table (`ERROR_CODES`) maps each code to its HTTP status and where it can occur.
 */

/** Codes answered before the stream starts (admission), with an HTTP status and a JSON envelope. */
export const ADMISSION_ERROR_CODES = [
  'INVALID_INPUT',
  'UNAUTHENTICATED',
  'THREAD_NOT_FOUND',
  'RUN_NOT_FOUND',
  'NOT_FOUND',
  'PAYLOAD_TOO_LARGE',
  'THREAD_BUSY',
  'INTERRUPTS_PENDING',
  'RESUME_INCOMPLETE',
  'RESUME_UNKNOWN_INTERRUPT',
  'RESUME_DUPLICATE_ENTRY',
  'RESUME_PAYLOAD_INVALID',
  'RESUME_NOTHING_PENDING',
  'UNKNOWN_TOOL_CALL',
  'INTERRUPT_EXPIRED',
  'DECISION_CONFLICT',
  'ALREADY_RESUMED',
  'STORE_UNAVAILABLE',
  // The thread cap (docs/protocol.md#limits): also a run's RUN_ERROR code when its own output would cross it.
  'THREAD_TOO_LARGE',
  'SERVER_SHUTTING_DOWN',
  // Per-principal quotas, and the server-wide body budget (docs/protocol.md#limits).
  'RATE_LIMITED',
  'SERVER_BUSY',
  // Results for browser calls another client already settled (docs/client-contract.md#browser-tools); a reconcile of
  // an effect that is not unknown (docs/client-contract.md#unknown-effects).
  'TOOL_RESULTS_ALREADY_SUBMITTED',
  'EFFECT_NOT_UNKNOWN',
  // Browser work claimed before it runs (docs/client-contract.md#browser-tools): another tab holds the call, or a
  // result set names a claim the call does not have.
  'TOOL_CALL_CLAIMED',
  'TOOL_CALL_NOT_CLAIMED',
  // A fork named a thread id the caller already has (docs/time-travel.md).
  'THREAD_EXISTS',
  // A decider who already voted on an interrupt answered it again (docs/approvals.md#organisation-policies).
  'ALREADY_VOTED',
] as const

/** Codes carried by `RUN_ERROR { message, code }` once `RUN_STARTED` has been sent. */
export const STREAM_ERROR_CODES = [
  'RUN_FAILED',
  'MODEL_ERROR',
  'TOOL_ERROR',
  'INTERNAL',
  'USAGE_LIMIT_EXCEEDED',
  'GUARDRAIL_FAILED',
] as const

/**
 * Admission codes that can also end a stream as `RUN_ERROR.code` (docs/protocol.md#error-codes): a run whose store
 * fails while it executes ends its open streams with `STORE_UNAVAILABLE`; a run whose own output would cross the
 * thread cap (or whose newest message cannot fit the model window) ends with `THREAD_TOO_LARGE`.
 */
export const ALSO_STREAM_ERROR_CODES = ['STORE_UNAVAILABLE', 'THREAD_TOO_LARGE'] as const

/**
 * Every code that may appear as `RUN_ERROR.code`: the stream codes, then `ALSO_STREAM_ERROR_CODES`. A literal list, not a
 * spread, so that bundles which do not use it drop it.
 */
export const RUN_ERROR_CODES = [
  'RUN_FAILED',
  'MODEL_ERROR',
  'TOOL_ERROR',
  'INTERNAL',
  'USAGE_LIMIT_EXCEEDED',
  'GUARDRAIL_FAILED',
  'STORE_UNAVAILABLE',
  'THREAD_TOO_LARGE',
] as const satisfies readonly (StreamErrorCode | (typeof ALSO_STREAM_ERROR_CODES)[number])[]

/** Codes raised locally by clients (never sent by a server). */
export const CLIENT_ERROR_CODES = [
  'PROTOCOL_ERROR',
  'NETWORK_ERROR',
  'ABORTED',
  'STALE_BATCH',
  'BATCH_CLAIMED',
  'RECOVERY_REQUIRED',
  'INVALID_STATE',
] as const

export type AdmissionErrorCode = (typeof ADMISSION_ERROR_CODES)[number]
export type StreamErrorCode = (typeof STREAM_ERROR_CODES)[number]
export type RunErrorCode = (typeof RUN_ERROR_CODES)[number]
export type ClientErrorCode = (typeof CLIENT_ERROR_CODES)[number]
export type ErrorCode = AdmissionErrorCode | StreamErrorCode | ClientErrorCode

export interface ErrorCodeInfo {
  /** HTTP status. For stream and client codes it is the status a log or proxy would use; never sent as a response status for client codes. */
  readonly status: number
  readonly kind: 'admission' | 'stream' | 'client'
  /** Whether repeating the same request unchanged may succeed. */
  readonly retryable: boolean
}

/** The one table from code to HTTP status (docs/protocol.md). */
export const ERROR_CODES: { readonly [C in ErrorCode]: ErrorCodeInfo } = {
  INVALID_INPUT: { status: 400, kind: 'admission', retryable: false },
  UNAUTHENTICATED: { status: 401, kind: 'admission', retryable: false },
  THREAD_NOT_FOUND: { status: 404, kind: 'admission', retryable: false },
  RUN_NOT_FOUND: { status: 404, kind: 'admission', retryable: false },
  NOT_FOUND: { status: 404, kind: 'admission', retryable: false },
  PAYLOAD_TOO_LARGE: { status: 413, kind: 'admission', retryable: false },
  THREAD_BUSY: { status: 409, kind: 'admission', retryable: true },
  INTERRUPTS_PENDING: { status: 409, kind: 'admission', retryable: false },
  RESUME_INCOMPLETE: { status: 422, kind: 'admission', retryable: false },
  RESUME_UNKNOWN_INTERRUPT: { status: 422, kind: 'admission', retryable: false },
  RESUME_DUPLICATE_ENTRY: { status: 422, kind: 'admission', retryable: false },
  RESUME_PAYLOAD_INVALID: { status: 422, kind: 'admission', retryable: false },
  RESUME_NOTHING_PENDING: { status: 409, kind: 'admission', retryable: false },
  UNKNOWN_TOOL_CALL: { status: 422, kind: 'admission', retryable: false },
  INTERRUPT_EXPIRED: { status: 410, kind: 'admission', retryable: false },
  DECISION_CONFLICT: { status: 409, kind: 'admission', retryable: false },
  ALREADY_RESUMED: { status: 409, kind: 'admission', retryable: false },
  STORE_UNAVAILABLE: { status: 503, kind: 'admission', retryable: true },
  THREAD_TOO_LARGE: { status: 413, kind: 'admission', retryable: false },
  SERVER_SHUTTING_DOWN: { status: 503, kind: 'admission', retryable: true },
  RATE_LIMITED: { status: 429, kind: 'admission', retryable: true },
  SERVER_BUSY: { status: 503, kind: 'admission', retryable: true },
  TOOL_RESULTS_ALREADY_SUBMITTED: { status: 409, kind: 'admission', retryable: false },
  EFFECT_NOT_UNKNOWN: { status: 409, kind: 'admission', retryable: false },
  TOOL_CALL_CLAIMED: { status: 409, kind: 'admission', retryable: false },
  TOOL_CALL_NOT_CLAIMED: { status: 409, kind: 'admission', retryable: false },
  THREAD_EXISTS: { status: 409, kind: 'admission', retryable: false },
  ALREADY_VOTED: { status: 409, kind: 'admission', retryable: false },
  RUN_FAILED: { status: 500, kind: 'stream', retryable: false },
  MODEL_ERROR: { status: 502, kind: 'stream', retryable: false },
  TOOL_ERROR: { status: 500, kind: 'stream', retryable: false },
  INTERNAL: { status: 500, kind: 'stream', retryable: false },
  // An operator's token cap (per thread or per principal) was reached before a model call
  // (docs/protocol.md#token-usage).
  USAGE_LIMIT_EXCEEDED: { status: 429, kind: 'stream', retryable: false },
  // A guardrail with `onFail: 'fail'` failed, or a guardrail's check threw (fail closed, docs/guardrails.md).
  GUARDRAIL_FAILED: { status: 422, kind: 'stream', retryable: false },
  PROTOCOL_ERROR: { status: 502, kind: 'client', retryable: true },
  NETWORK_ERROR: { status: 503, kind: 'client', retryable: true },
  ABORTED: { status: 499, kind: 'client', retryable: false },
  STALE_BATCH: { status: 409, kind: 'client', retryable: false },
  BATCH_CLAIMED: { status: 409, kind: 'client', retryable: false },
  RECOVERY_REQUIRED: { status: 409, kind: 'client', retryable: false },
  INVALID_STATE: { status: 409, kind: 'client', retryable: false },
}

/**
 * What went wrong with a model call, in `RUN_ERROR.details` of a `MODEL_ERROR` (docs/protocol.md#model-errors).
 * Never carries upstream text: only a kind, whether trying again later may help, and the upstream HTTP status.
 */
export const MODEL_ERROR_KINDS = [
  'auth',
  'rate_limited',
  'unavailable',
  'context_length',
  'timeout',
  'bad_request',
  'stream_reset',
  'truncated',
  'content_filter',
] as const
export type ModelErrorKind = (typeof MODEL_ERROR_KINDS)[number]

export interface ModelErrorDetails {
  readonly kind: ModelErrorKind
  /** Whether the same input may succeed later (capacity, network), as opposed to configuration or thread size. */
  readonly retryable: boolean
  /** The upstream HTTP status, when the provider answered with one. */
  readonly status?: number
  /** For `timeout`: which bound ran out. */
  readonly timeout?: 'headers' | 'idle' | 'total'
}

/** `RUN_ERROR.details` of `USAGE_LIMIT_EXCEEDED`: which cap was reached (docs/protocol.md#token-usage). */
export interface UsageLimitDetails {
  readonly scope: 'thread' | 'principal'
  readonly limit: number
  readonly used: number
}

const ALL_CODES = new Set<string>(Object.keys(ERROR_CODES))

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && ALL_CODES.has(value)
}

/** HTTP status for a code (the tRPC-style single mapping). */
export function httpStatusOf(code: ErrorCode): number {
  return ERROR_CODES[code].status
}

/** The JSON body of every non-2xx answer: `{ error: { code, message, details? } }`. */
export interface ErrorEnvelope {
  readonly error: {
    readonly code: ErrorCode
    readonly message: string
    readonly details?: unknown
  }
}

export function isErrorEnvelope(value: unknown): value is ErrorEnvelope {
  if (typeof value !== 'object' || value === null) return false
  const error = (value as { error?: unknown }).error
  if (typeof error !== 'object' || error === null) return false
  const { code, message } = error as { code?: unknown; message?: unknown }
  return isErrorCode(code) && typeof message === 'string'
}

// Symbol.for so that two copies of this package (e.g. duplicated in a bundle) still agree.
const MARKER = Symbol.for('@interlude/protocol/InterludeError')

export interface InterludeErrorOptions {
  readonly details?: unknown
  readonly cause?: unknown
}

export class InterludeError extends Error {
  readonly code: ErrorCode
  readonly details: unknown
  declare readonly cause: unknown
  readonly [MARKER] = true

  constructor(code: ErrorCode, message: string, options: InterludeErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.name = 'InterludeError'
    this.code = code
    this.details = options.details
  }

  get status(): number {
    return ERROR_CODES[this.code].status
  }

  get retryable(): boolean {
    return ERROR_CODES[this.code].retryable
  }

  /** The wire envelope. Only `code`, `message` and `details` leave the process, never `cause`. */
  toEnvelope(): ErrorEnvelope {
    return {
      error:
        this.details === undefined
          ? { code: this.code, message: this.message }
          : { code: this.code, message: this.message, details: this.details },
    }
  }

  /** Works across duplicated package copies (checks a global symbol, not the prototype chain). */
  static isInstance(value: unknown): value is InterludeError {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[MARKER] === true
  }

  /**
   * Anything thrown becomes an InterludeError. A foreign error keeps its original as `cause` but its
   * message is replaced: raw exception text never reaches a client.
   */
  static fromUnknown(value: unknown, fallback: ErrorCode = 'INTERNAL', message = 'Internal error'): InterludeError {
    if (InterludeError.isInstance(value)) return value
    return new InterludeError(fallback, message, { cause: value })
  }

  /** Rebuilds the error a server sent as an envelope; `undefined` when the body is not an envelope. */
  static fromEnvelope(body: unknown): InterludeError | undefined {
    if (!isErrorEnvelope(body)) return undefined
    const { code, message, details } = body.error
    return new InterludeError(code, message, details === undefined ? {} : { details })
  }
}
