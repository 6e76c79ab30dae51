import type { Message } from '@interlude/protocol'
import { InterludeError } from '@interlude/protocol'
import { useEffect, useId, useRef, useState, type FormEvent, type ReactNode } from 'react'
import type { PendingInterruptBatch, ResumeOptions } from '../core/types.ts'
import { ApprovalQuestion, InputQuestion } from './interrupt-questions.tsx'
import { interruptTitle } from './interrupt-title.ts'
import {
  isApproval,
  useInterruptForm,
  type InterruptDrafts,
  type UseInterruptFormResult,
} from './use-interrupt-form.ts'

export interface InterruptFormProps {
  /** The batch to answer (`useChat().pendingInterrupts`). Nothing is rendered without one. */
  readonly batch: PendingInterruptBatch | undefined
  /** Receives the complete resume argument (pass `useChat().resume`). Synchronous throws are shown. */
  readonly onSubmit: (resume: ResumeOptions) => unknown
  /** Disables every control (e.g. while `isResuming`). */
  readonly disabled?: boolean
  /** History, for the original arguments of tool calls offered for editing. */
  readonly messages?: readonly Message[]
  readonly title?: ReactNode
  /** Added to the form's own class `interlude-interrupt-form`. */
  readonly className?: string
  /** Classes added to the form's parts, beside their own `interlude-*` classes (README "Styling"). */
  readonly classNames?: InterruptFormClassNames
  /**
   * Controlled mode: the form state from `useInterruptForm(batch, …)` owned by the caller, who can
   * then read or change the drafts. Without it the form keeps its own state.
   */
  readonly form?: UseInterruptFormResult
  /**
   * Called after the drafts of the shown batch changed (not when a batch opens), with the form
   * they belong to. Works in both modes.
   */
  readonly onDraftsChange?: (drafts: InterruptDrafts, form: UseInterruptFormResult) => void
}

/** Extra classes for the parts of `<InterruptForm>`; each part always keeps its `interlude-*` class. */
export interface InterruptFormClassNames {
  /** The heading (`interlude-interrupt-form-title`). */
  readonly title?: string
  /** Each interrupt's fieldset (`interlude-interrupt`, with `data-reason`). */
  readonly interrupt?: string
  /** Each interrupt's legend (`interlude-interrupt-title`). */
  readonly legend?: string
  /** Each subagent's group of questions (`interlude-subagent-group`, with `data-subagent-run-id`). */
  readonly group?: string
  /** The button row (`interlude-actions`). */
  readonly actions?: string
  /** The form-level alerts (`interlude-form-alert`). */
  readonly alert?: string
}

const cx = (own: string, extra: string | undefined) => (extra ? `${own} ${extra}` : own)

/**
 * The default accessible form for a batch: one fieldset per interrupt (legend = the server's
 * message; a subagent's interrupts come after the parent's, in a section headed by the subagent's name), approve/deny/cancel radios for approval schemas (with `editedArgs` editing when the tool
 * allows it), schema-driven fields for other questions, and Approve all / Deny all / Cancel all.
 * Submits the complete batch at once. The submit button stays enabled (so a keyboard or screen
 * reader user can always ask what is missing); an incomplete or invalid batch is not submitted and
 * the missing answers are announced instead.
 */
export function InterruptForm({
  batch,
  onSubmit,
  disabled = false,
  messages,
  title,
  className,
  classNames = {},
  form: controlled,
  onDraftsChange,
}: InterruptFormProps) {
  // Hooks run unconditionally; in controlled mode the own state stays unused.
  const own = useInterruptForm(batch, messages ? { messages } : {})
  const form = controlled ?? own
  useDraftsChange(form, onDraftsChange)
  const baseId = useId()
  const [attempted, setAttempted] = useState<string | undefined>()
  const [failure, setFailure] = useState<{ batchId: string | undefined; message: string } | undefined>()
  if (!batch || form.batchId !== batch.id) return null
  const showMissing = attempted === form.batchId
  const problem = failure?.batchId === form.batchId ? failure.message : undefined
  const hasApprovals = form.interrupts.some(isApproval)

  function submit(e: FormEvent) {
    e.preventDefault()
    setAttempted(form.batchId)
    if (!form.isValid) return
    try {
      onSubmit(form.buildResume())
      setFailure(undefined)
    } catch (error) {
      setFailure({
        batchId: form.batchId,
        message: InterludeError.isInstance(error) ? `${error.message} (${error.code})` : String(error),
      })
    }
  }

  return (
    <form
      className={cx('interlude-interrupt-form', className)}
      aria-labelledby={`${baseId}-title`}
      onSubmit={submit}
      noValidate
    >
      <h2 id={`${baseId}-title`} className={cx('interlude-interrupt-form-title', classNames.title)}>
        {title ?? 'The agent needs your answer'}
      </h2>
      {form.groups.map((group) => {
        const questions = group.interrupts.map((interrupt) => {
          // Element ids follow the batch order, whichever group shows the interrupt.
          const id = `${baseId}-${form.interrupts.indexOf(interrupt)}`
          const missing = showMissing && form.drafts[interrupt.id] === undefined
          return (
            // Keyed by batch and interrupt: a new batch reusing interrupt ids starts with fresh field state.
            <fieldset
              key={`${form.batchId}:${interrupt.id}`}
              className={cx('interlude-interrupt', classNames.interrupt)}
              data-reason={interrupt.reason}
              aria-describedby={missing ? `${id}-missing` : undefined}
            >
              <legend className={cx('interlude-interrupt-title', classNames.legend)}>
                {interruptTitle(interrupt, messages)}
              </legend>
              {isApproval(interrupt) ? (
                <ApprovalQuestion interrupt={interrupt} form={form} id={id} disabled={disabled} />
              ) : (
                <InputQuestion interrupt={interrupt} form={form} id={id} disabled={disabled} />
              )}
              {missing && (
                <p id={`${id}-missing`} className="interlude-field-error">
                  An answer is required.
                </p>
              )}
            </fieldset>
          )
        })
        if (group.subagentRunId === undefined) return questions
        // A subagent's questions are labelled by the subagent (docs/client-contract.md#subagents); still one submit.
        const headingId = `${baseId}-${group.key}`
        return (
          <section
            key={`${form.batchId}:${group.key}`}
            className={cx('interlude-subagent-group', classNames.group)}
            aria-labelledby={headingId}
            data-subagent-run-id={group.subagentRunId}
          >
            <h3 id={headingId} className="interlude-subagent-group-title">
              {group.label}
            </h3>
            {questions}
          </section>
        )
      })}
      <div className={cx('interlude-actions', classNames.actions)}>
        {hasApprovals && (
          <>
            <button type="button" disabled={disabled} onClick={form.approveAll}>
              Approve all
            </button>
            <button type="button" disabled={disabled} onClick={form.denyAll}>
              Deny all
            </button>
          </>
        )}
        <button type="button" disabled={disabled} onClick={form.cancelAll}>
          Cancel all
        </button>
        <button type="submit" disabled={disabled}>
          Submit answers
        </button>
      </div>
      {showMissing && !form.isValid && (
        <p role="alert" className={cx('interlude-form-alert', classNames.alert)}>
          Some answers are missing or invalid.
        </p>
      )}
      {problem && (
        <p role="alert" className={cx('interlude-form-alert', classNames.alert)}>
          {problem}
        </p>
      )}
    </form>
  )
}

/** Reports draft changes after commit; a batch that opens (new batch id) is not a change. */
function useDraftsChange(form: UseInterruptFormResult, onChange: InterruptFormProps['onDraftsChange']): void {
  const latest = useRef(onChange)
  useEffect(() => {
    latest.current = onChange
  })
  const seen = useRef({ batchId: form.batchId, drafts: form.drafts })
  useEffect(() => {
    const previous = seen.current
    if (previous.batchId === form.batchId && previous.drafts === form.drafts) return
    seen.current = { batchId: form.batchId, drafts: form.drafts }
    if (previous.batchId === form.batchId) latest.current?.(form.drafts, form)
  }, [form])
}
