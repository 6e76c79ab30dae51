import type { JsonSchema } from './tool.ts'

/**
 * What a tool asks from inside `execute` with `ctx.interrupt` (docs/approvals.md#asking-from-inside-a-tool): the
 * interrupt the turn pauses with. The answer is checked against `responseSchema` (Ajv) before the run resumes.
 */
export interface ToolInterruptRequest {
  /** `confirmation` (default), `input_required`, or an application reason `interlude:<name>`. */
  readonly reason?: ToolInterruptReason
  /** The question, shown to the person. */
  readonly message: string
  /** JSON Schema of the answer (local `$ref`s only). */
  readonly responseSchema: JsonSchema
  /** Extra data for the client (merged into the interrupt's `metadata`; `toolName` is set by the server). */
  readonly metadata?: Record<string, unknown>
}

export type ToolInterruptReason = 'confirmation' | 'input_required' | `interlude:${string}`

/** `interlude:` followed by a lowercase name (letters, digits, `_ . -`). */
const APPLICATION_REASON = /^interlude:[a-z0-9][a-z0-9_.-]{0,62}$/

export function isToolInterruptReason(value: unknown): value is ToolInterruptReason {
  return (
    value === 'confirmation' ||
    value === 'input_required' ||
    (typeof value === 'string' && APPLICATION_REASON.test(value))
  )
}

/** Why a `ctx.interrupt` call has no answer: the person (or the deadline) cancelled the question. */
export type InterruptCancelledCode = 'INTERRUPT_CANCELLED'

/**
 * Thrown by `ctx.interrupt` when its question was cancelled (a `cancelled` resume entry, the deadline's
 * cancellation, or a cancelled batch). A tool may catch it and return a result of its own; uncaught, the call ends
 * `cancelled` with a result that says the person cancelled the question.
 */
export class InterruptCancelledError extends Error {
  readonly code: InterruptCancelledCode = 'INTERRUPT_CANCELLED'
  /** The id of the interrupt whose answer was cancelled. */
  readonly interruptId: string

  constructor(interruptId: string) {
    super('The question was cancelled; there is no answer.')
    this.name = 'InterruptCancelledError'
    this.interruptId = interruptId
  }

  static isInstance(error: unknown): error is InterruptCancelledError {
    return error instanceof InterruptCancelledError
  }
}
