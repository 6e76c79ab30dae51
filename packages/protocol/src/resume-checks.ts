import type { Interrupt, ResumeEntry } from '@ag-ui/core'
import { canonicalJson, NonJsonValueError } from './canonical-json.ts'
import type { ErrorCode } from './errors.ts'
import { InterludeError } from './errors.ts'
import { isExpiredAt } from './expires-at.ts'

/**
 * Resume checks shared by the client (synchronous rejection in `resume()`) and the server
 * (admission before any stream byte). Results are typed problems, not strings.
 */
export type ResumeProblem =
  | { readonly kind: 'not_array' }
  | { readonly kind: 'nothing_pending' }
  | {
      readonly kind: 'invalid_entry'
      readonly index: number
      readonly reason: 'not_object' | 'interrupt_id' | 'metadata'
    }
  | { readonly kind: 'bad_status'; readonly interruptId: string; readonly status: unknown }
  | { readonly kind: 'cancelled_with_payload'; readonly interruptId: string }
  | {
      readonly kind: 'non_json'
      readonly interruptId: string
      readonly field: 'payload' | 'metadata'
      readonly path: string
    }
  | { readonly kind: 'duplicate'; readonly interruptId: string }
  | { readonly kind: 'unknown'; readonly interruptId: string }
  | { readonly kind: 'missing'; readonly interruptIds: readonly string[]; readonly partial: boolean }
  | { readonly kind: 'expired'; readonly interruptIds: readonly string[] }

export type ResumeProblemKind = ResumeProblem['kind']

export interface ResumeCheckOptions {
  /** Clock in epoch ms used for expiry. */
  readonly now: number
  /**
   * `refuse-resolved` (server, docs/architecture.md): an expired batch may still be closed by an
   * all-`cancelled` resume. `refuse-all` (client, docs/client-contract.md): an expired batch cannot be resumed.
   * @default 'refuse-resolved'
   */
  readonly expiry?: 'refuse-resolved' | 'refuse-all'
}

export type ResumeCheckResult =
  | {
      readonly ok: true
      readonly entries: readonly ResumeEntry[]
      readonly allCancelled: boolean
      readonly expired: boolean
    }
  | {
      readonly ok: false
      readonly problems: readonly ResumeProblem[]
      readonly code: ErrorCode
      readonly message: string
    }

const PROBLEM_CODE: { readonly [K in ResumeProblemKind]: ErrorCode } = {
  not_array: 'INVALID_INPUT',
  invalid_entry: 'INVALID_INPUT',
  bad_status: 'INVALID_INPUT',
  cancelled_with_payload: 'INVALID_INPUT',
  non_json: 'INVALID_INPUT',
  nothing_pending: 'RESUME_NOTHING_PENDING',
  duplicate: 'RESUME_DUPLICATE_ENTRY',
  unknown: 'RESUME_UNKNOWN_INTERRUPT',
  missing: 'RESUME_INCOMPLETE',
  expired: 'INTERRUPT_EXPIRED',
}

// In priority order: earlier kinds win when several problems are present (`PRIORITY`).
const MESSAGES: { readonly [K in ResumeProblemKind]: string } = {
  not_array: 'resume must be an array of entries.',
  invalid_entry: 'A resume entry is malformed.',
  bad_status: 'A resume entry has a status other than "resolved" or "cancelled".',
  cancelled_with_payload: 'A cancelled resume entry must not carry a payload.',
  non_json: 'A resume payload or metadata is not a JSON value.',
  nothing_pending: 'There is no pending interrupt batch to resume.',
  duplicate: 'The same interrupt is answered more than once.',
  unknown: 'A resume entry names an interrupt that is not pending.',
  missing: 'Every pending interrupt must be answered or cancelled together.',
  expired: 'The interrupt batch has expired; only a cancellation can close it.',
}

const PRIORITY = Object.keys(MESSAGES) as ResumeProblemKind[]

export function resumeProblemCode(kind: ResumeProblemKind): ErrorCode {
  return PROBLEM_CODE[kind]
}

function isPlainRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function jsonProblem(value: unknown): string | undefined {
  try {
    canonicalJson(value)
    return undefined
  } catch (error) {
    return error instanceof NonJsonValueError ? error.path || '<root>' : '<root>'
  }
}

export function checkResume(
  pending: readonly Interrupt[],
  entries: unknown,
  options: ResumeCheckOptions,
): ResumeCheckResult {
  const problems: ResumeProblem[] = []
  const normalized: ResumeEntry[] = []
  if (!Array.isArray(entries)) {
    problems.push({ kind: 'not_array' })
    return fail(problems)
  }
  if (pending.length === 0) problems.push({ kind: 'nothing_pending' })

  const pendingIds = new Set(pending.map((i) => i.id))
  const seen = new Set<string>()
  entries.forEach((raw: unknown, index) => {
    if (!isPlainRecord(raw)) {
      problems.push({ kind: 'invalid_entry', index, reason: 'not_object' })
      return
    }
    const { interruptId, status, payload, metadata } = raw
    if (typeof interruptId !== 'string' || interruptId.length === 0) {
      problems.push({ kind: 'invalid_entry', index, reason: 'interrupt_id' })
      return
    }
    if (metadata !== undefined && !isPlainRecord(metadata)) {
      problems.push({ kind: 'invalid_entry', index, reason: 'metadata' })
      return
    }
    if (status !== 'resolved' && status !== 'cancelled') {
      problems.push({ kind: 'bad_status', interruptId, status })
      return
    }
    if (status === 'cancelled' && payload !== undefined) {
      problems.push({ kind: 'cancelled_with_payload', interruptId })
      return
    }
    const payloadPath = payload === undefined ? undefined : jsonProblem(payload)
    if (payloadPath !== undefined) {
      problems.push({ kind: 'non_json', interruptId, field: 'payload', path: payloadPath })
      return
    }
    const metadataPath = metadata === undefined ? undefined : jsonProblem(metadata)
    if (metadataPath !== undefined) {
      problems.push({ kind: 'non_json', interruptId, field: 'metadata', path: metadataPath })
      return
    }
    if (seen.has(interruptId)) {
      problems.push({ kind: 'duplicate', interruptId })
      return
    }
    seen.add(interruptId)
    if (!pendingIds.has(interruptId)) {
      problems.push({ kind: 'unknown', interruptId })
      return
    }
    const entry: ResumeEntry = { interruptId, status }
    if (payload !== undefined) entry.payload = payload
    if (metadata !== undefined) entry.metadata = metadata
    normalized.push(entry)
  })

  if (pending.length > 0) {
    const missing = pending.filter((i) => !seen.has(i.id)).map((i) => i.id)
    if (missing.length > 0)
      problems.push({ kind: 'missing', interruptIds: missing, partial: missing.length < pending.length })
  }

  const expiredIds = pending.filter((i) => isExpiredAt(i.expiresAt, options.now)).map((i) => i.id)
  const allCancelled = normalized.length > 0 && normalized.every((e) => e.status === 'cancelled')
  const expiryPolicy = options.expiry ?? 'refuse-resolved'
  if (expiredIds.length > 0 && (expiryPolicy === 'refuse-all' || !allCancelled)) {
    problems.push({ kind: 'expired', interruptIds: expiredIds })
  }

  if (problems.length > 0) return fail(problems)
  return { ok: true, entries: normalized, allCancelled, expired: expiredIds.length > 0 }
}

function fail(problems: ResumeProblem[]): Extract<ResumeCheckResult, { ok: false }> {
  const sorted = [...problems].sort((a, b) => PRIORITY.indexOf(a.kind) - PRIORITY.indexOf(b.kind))
  const top = sorted[0]!
  return { ok: false, problems: sorted, code: PROBLEM_CODE[top.kind], message: MESSAGES[top.kind] }
}

const SHAPE_KINDS = new Set<ResumeProblemKind>([
  'not_array',
  'invalid_entry',
  'bad_status',
  'cancelled_with_payload',
  'non_json',
  'duplicate',
])

/**
 * The checks that do not depend on the pending batch (structure, status, cancelled-with-payload,
 * JSON-ness, duplicates): what a server can refuse before it has read the thread.
 */
export function checkResumeShape(entries: unknown): { readonly ok: true } | Extract<ResumeCheckResult, { ok: false }> {
  const result = checkResume([], entries, { now: 0 })
  if (result.ok) return { ok: true }
  const problems = result.problems.filter((p) => SHAPE_KINDS.has(p.kind))
  return problems.length === 0 ? { ok: true } : (fail(problems) as Extract<ResumeCheckResult, { ok: false }>)
}

/** The InterludeError for a failed check; `details.problems` carries every problem found. */
export function resumeCheckError(result: Extract<ResumeCheckResult, { ok: false }>): InterludeError {
  return new InterludeError(result.code, result.message, { details: { problems: result.problems } })
}
