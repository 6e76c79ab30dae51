import type { Interrupt, ResumeEntry } from '@interlude/protocol'
import { InterludeError } from '@interlude/protocol'
import type { PendingInterruptBatch, ResumeOptions } from '../core/types.ts'
import { validatePayload, type FieldError } from './validate-payload.ts'

/** The draft answer of one interrupt: nothing yet, a resolved payload, or a cancellation. */
export type InterruptDraft =
  { readonly status: 'resolved'; readonly payload: unknown } | { readonly status: 'cancelled' }

/** The drafts of a batch by interrupt id (an interrupt without a draft is unanswered). */
export type InterruptDrafts = Readonly<Record<string, InterruptDraft | undefined>>

/** A path inside a payload (`['editedArgs', 'version']`). */
export type PayloadPath = readonly (string | number)[]

/** The keyword of the error an unanswered interrupt has in `errors` (docs/client-contract.md#form-helpers). */
export const UNANSWERED = 'unanswered'

/** Everything one form holds for one batch: the drafts, whether a submit was tried, its synchronous refusal. */
export interface FormState {
  readonly batchId: string | undefined
  readonly interrupts: readonly Interrupt[]
  readonly drafts: InterruptDrafts
  /** A submit was attempted on this batch (missing answers are announced from then on). */
  readonly attempted: boolean
  /** The last submit's synchronous refusal, as text (`STALE_BATCH`, `BATCH_CLAIMED`, …). */
  readonly failure: string | undefined
}

const EMPTY: readonly Interrupt[] = Object.freeze([])

export function openForm(batch: PendingInterruptBatch | undefined): FormState {
  return {
    batchId: batch?.id,
    interrupts: batch?.interrupts ?? EMPTY,
    drafts: {},
    attempted: false,
    failure: undefined,
  }
}

/** True when the interrupt's schema is the approval shape `{ approved: boolean, ... }`. */
export function isApproval(interrupt: Interrupt): boolean {
  const props = (interrupt.responseSchema as { properties?: Record<string, { type?: unknown }> } | undefined)
    ?.properties
  return props?.approved?.type === 'boolean'
}

/** The schema of `editedArgs` when the tool allows edits. */
export function editedArgsSchema(interrupt: Interrupt): Record<string, unknown> | undefined {
  const props = (interrupt.responseSchema as { properties?: Record<string, Record<string, unknown>> } | undefined)
    ?.properties
  return props?.editedArgs
}

export const payloadOf = (d: InterruptDraft | undefined): unknown => (d?.status === 'resolved' ? d.payload : undefined)

/** `target` with `value` at `path`, objects (or arrays, for numeric keys) created along it; `undefined` deletes. */
export function setIn(target: unknown, path: PayloadPath, value: unknown): unknown {
  if (path.length === 0) return value
  const [head, ...rest] = path
  const base = (
    Array.isArray(target)
      ? [...(target as unknown[])]
      : typeof target === 'object' && target !== null
        ? { ...(target as Record<string, unknown>) }
        : typeof head === 'number'
          ? []
          : {}
  ) as Record<string | number, unknown>
  const next = setIn(base[head!], rest, value)
  if (next === undefined && !Array.isArray(base)) delete base[head!]
  else base[head!] = next
  return base
}

/** Problems per interrupt id: `unanswered`, or the payload's errors against its `responseSchema`. */
export function errorsOf(
  interrupts: readonly Interrupt[],
  drafts: InterruptDrafts,
): Readonly<Record<string, readonly FieldError[]>> {
  const out: Record<string, readonly FieldError[]> = {}
  for (const i of interrupts) {
    const d = drafts[i.id]
    if (d === undefined) out[i.id] = [{ path: [], message: 'An answer is required.', keyword: UNANSWERED }]
    else if (d.status === 'resolved') {
      const problems = validatePayload(i.responseSchema, d.payload)
      if (problems.length > 0) out[i.id] = problems
    }
  }
  return out
}

/** The complete, checked state of a form: what `getState()` returns and what the render shows. */
export interface FormCheck {
  readonly drafts: InterruptDrafts
  readonly errors: Readonly<Record<string, readonly FieldError[]>>
  /** Every interrupt has an answer or a cancellation. */
  readonly isComplete: boolean
  /** Complete and every payload matches its schema. */
  readonly isValid: boolean
}

export function check(state: FormState, errors = errorsOf(state.interrupts, state.drafts)): FormCheck {
  const isComplete = state.interrupts.length > 0 && state.interrupts.every((i) => state.drafts[i.id] !== undefined)
  return { drafts: state.drafts, errors, isComplete, isValid: isComplete && Object.keys(errors).length === 0 }
}

/** The `resume` argument of a valid state; `INVALID_INPUT` (details.errors) otherwise, `STALE_BATCH` with no batch. */
export function resumeOf(state: FormState): ResumeOptions {
  const { batchId, interrupts, drafts } = state
  if (batchId === undefined) throw new InterludeError('STALE_BATCH', 'There is no batch to answer.')
  const { errors, isValid } = check(state)
  if (!isValid)
    throw new InterludeError('INVALID_INPUT', 'Some answers are missing or invalid.', { details: { errors } })
  const entries: ResumeEntry[] = interrupts.map((i) => {
    const d = drafts[i.id]!
    return d.status === 'cancelled'
      ? { interruptId: i.id, status: 'cancelled' }
      : { interruptId: i.id, status: 'resolved', payload: d.payload }
  })
  return { batchId, entries }
}

/** A payload without the `reason` of an earlier denial: an approval does not carry a denial's note. */
export function withoutReason(payload: unknown): Record<string, unknown> {
  if (typeof payload !== 'object' || payload === null) return {}
  const { reason: _reason, ...rest } = payload as Record<string, unknown>
  return rest
}

/** Approval-shaped interrupts approved (edits kept, a denial's note dropped) or denied; the others keep their drafts. */
export function decideAll(state: FormState, approved: boolean): InterruptDrafts {
  const next = { ...state.drafts }
  for (const i of state.interrupts) {
    if (!isApproval(i)) continue
    const previous = payloadOf(state.drafts[i.id])
    next[i.id] = {
      status: 'resolved',
      payload: approved ? { ...withoutReason(previous), approved: true } : { approved: false },
    }
  }
  return next
}
