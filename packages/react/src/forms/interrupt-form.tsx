import type { Message } from '@interlude/protocol'
import { useEffect, useId, useRef, type FormEvent, type ReactNode } from 'react'
import type { PendingInterruptBatch, ResumeOptions } from '../core/types.ts'
import { useInterruptFormContext } from './interrupt-context.tsx'
import { rendererProps, type InterruptRendererProps, type InterruptRenderers } from './interrupt-renderer.ts'
import { QuestionBody, questionNoteIds } from './question-body.tsx'
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
  /**
   * Custom renderers by tool name (`{ deploy: DeployCard }`): such an interrupt is shown by its renderer instead of
   * the default question, answered into the same drafts and validated with the rest of the batch. Under an
   * `<InterruptFormProvider>` its `renderers` are the default.
   */
  readonly renderers?: InterruptRenderers
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
  renderers,
}: InterruptFormProps) {
  // Hooks run unconditionally; in controlled mode (or under a provider) the own state stays unused.
  const own = useInterruptForm(batch, messages ? { messages } : {})
  const context = useInterruptFormContext()
  const form = controlled ?? context?.form ?? own
  useDraftsChange(form, onDraftsChange)
  const baseId = useId()
  if (!batch || form.batchId !== batch.id) return null
  const showMissing = form.attempted
  const hasApprovals = form.interrupts.some(isApproval)
  const byTool = renderers ?? context?.renderers ?? {}
  // Questions an <InlineApproval> shows at their tool call are summarized here, not asked twice.
  const inline = context !== undefined && context.form.batchId === form.batchId ? context.inline : undefined

  function submit(e: FormEvent) {
    e.preventDefault()
    form.submit(onSubmit)
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
          const props = rendererProps(form, interrupt, { id, disabled, send: onSubmit })
          const renderer = props.toolName !== undefined ? byTool[props.toolName] : undefined
          const elsewhere = inline?.has(interrupt.id) === true
          return (
            // Keyed by batch and interrupt: a new batch reusing interrupt ids starts with fresh field state.
            <fieldset
              key={`${form.batchId}:${interrupt.id}`}
              className={cx('interlude-interrupt', classNames.interrupt)}
              data-reason={interrupt.reason}
              data-tool={props.toolName}
              aria-describedby={questionNoteIds(props, elsewhere || renderer !== undefined)}
            >
              <legend className={cx('interlude-interrupt-title', classNames.legend)}>{props.title}</legend>
              {elsewhere ? <InlineSummary props={props} /> : <QuestionBody props={props} renderer={renderer} />}
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
      {form.failure !== undefined && (
        <p role="alert" className={cx('interlude-form-alert', classNames.alert)}>
          {form.failure}
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

const DECISION_TEXT = {
  approved: 'Approved',
  denied: 'Denied',
  answered: 'Answered',
  cancelled: 'Cancelled',
} as const

/** A question answered at its tool call: where it stands, so the batch form still accounts for every answer. */
function InlineSummary({ props }: { props: InterruptRendererProps }) {
  return (
    <>
      <p className="interlude-inline-summary">
        {props.decision === undefined
          ? 'Answer it at its tool call in the conversation.'
          : `${DECISION_TEXT[props.decision]} at its tool call.`}
      </p>
      {props.missing && (
        <p id={`${props.id}-missing`} className="interlude-field-error">
          An answer is required.
        </p>
      )}
      {props.form.attempted && props.errors.length > 0 && (
        <p id={`${props.id}-problems`} className="interlude-field-error">
          Its answer is not valid: {props.errors.map((e) => e.message).join(' ')}
        </p>
      )}
    </>
  )
}
