import type { Interrupt, Message } from '@interlude/protocol'
import { InterludeError } from '@interlude/protocol'
import { useEffect, useId, useRef, useState, type FormEvent, type ReactNode } from 'react'
import type { PendingInterruptBatch, ResumeOptions } from '../core/types.ts'
import {
  editedArgsSchema,
  isApproval,
  useInterruptForm,
  type InterruptDrafts,
  type UseInterruptFormResult,
} from './use-interrupt-form.ts'
import type { FieldError } from './validate-payload.ts'

type Schema = {
  readonly type?: string | readonly string[]
  readonly enum?: readonly unknown[]
  readonly const?: unknown
  readonly title?: string
  readonly description?: string
  readonly properties?: Readonly<Record<string, Schema>>
  readonly required?: readonly string[]
}

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

const typeOf = (s: Schema | undefined): string | undefined =>
  Array.isArray(s?.type) ? (s!.type as string[]).find((t) => t !== 'null') : (s?.type as string | undefined)

function errorsAt(errors: readonly FieldError[] | undefined, path: readonly string[]): FieldError[] {
  // "unanswered" is announced once per question by the form, not by a field.
  return (errors ?? []).filter(
    (e) => e.keyword !== 'unanswered' && e.path.length === path.length && e.path.every((p, i) => p === path[i]),
  )
}

function label(key: string, schema: Schema): string {
  return schema.title ?? key.replace(/[_-]+/g, ' ').replace(/^./, (c) => c.toUpperCase())
}

interface FieldProps {
  readonly id: string
  readonly name: string
  readonly schema: Schema
  readonly value: unknown
  readonly required: boolean
  readonly path: readonly string[]
  readonly errors: readonly FieldError[] | undefined
  readonly disabled: boolean
  readonly onChange: (path: readonly string[], value: unknown) => void
}

/** One schema-driven field: booleans (yes/no), enums, strings, numbers, nested objects; JSON for the rest. */
function Field({ id, name, schema, value, required, path, errors, disabled, onChange }: FieldProps) {
  const own = errorsAt(errors, path)
  const errorId = `${id}-error`
  const described = own.length > 0 ? { 'aria-invalid': true as const, 'aria-describedby': errorId } : {}
  const text = label(name, schema)
  const hint = own.length > 0 && (
    <span id={errorId} className="interlude-field-error">
      {own.map((e) => e.message).join(' ')}
    </span>
  )
  const type = typeOf(schema)
  if (type === 'object' || schema.properties) {
    const obj = (typeof value === 'object' && value !== null ? value : {}) as Record<string, unknown>
    return (
      <fieldset className="interlude-object" {...(own.length > 0 ? { 'aria-describedby': errorId } : {})}>
        <legend>{text}</legend>
        {Object.entries(schema.properties ?? {}).map(([key, child]) => (
          <Field
            key={key}
            id={`${id}-${key}`}
            name={key}
            schema={child}
            value={obj[key]}
            required={schema.required?.includes(key) ?? false}
            path={[...path, key]}
            errors={errors}
            disabled={disabled}
            onChange={onChange}
          />
        ))}
        {hint}
      </fieldset>
    )
  }
  if (schema.enum) {
    const options = schema.enum
    const index = options.findIndex((o) => o === value)
    return (
      <div className="interlude-field">
        <label htmlFor={id}>{text}</label>
        <select
          id={id}
          value={index < 0 ? '' : String(index)}
          disabled={disabled}
          required={required}
          onChange={(e) => onChange(path, e.target.value === '' ? undefined : options[Number(e.target.value)])}
          {...described}
        >
          <option value="">{required ? 'Choose…' : '—'}</option>
          {options.map((o, i) => (
            <option key={i} value={String(i)}>
              {String(o)}
            </option>
          ))}
        </select>
        {hint}
      </div>
    )
  }
  if (type === 'boolean') {
    // An explicit yes/no choice with an empty "choose" state: `false` is a deliberate answer, never
    // the silent default of an untouched checkbox (and an optional boolean can be left unset).
    const current = value === true ? 'true' : value === false ? 'false' : ''
    return (
      <div className="interlude-field">
        <label htmlFor={id}>{text}</label>
        <select
          id={id}
          value={current}
          disabled={disabled}
          required={required}
          onChange={(e) => onChange(path, e.target.value === '' ? undefined : e.target.value === 'true')}
          {...described}
        >
          <option value="">{required ? 'Choose…' : '—'}</option>
          <option value="true">Yes</option>
          <option value="false">No</option>
        </select>
        {hint}
      </div>
    )
  }
  if (type === 'number' || type === 'integer') {
    return (
      <div className="interlude-field">
        <label htmlFor={id}>{text}</label>
        <input
          id={id}
          type="number"
          step={type === 'integer' ? 1 : 'any'}
          value={typeof value === 'number' ? String(value) : ''}
          required={required}
          disabled={disabled}
          onChange={(e) => onChange(path, e.target.value === '' ? undefined : Number(e.target.value))}
          {...described}
        />
        {hint}
      </div>
    )
  }
  if (type === 'string' || type === undefined) {
    if (type === 'string' || value === undefined || typeof value === 'string') {
      return (
        <div className="interlude-field">
          <label htmlFor={id}>{text}</label>
          <input
            id={id}
            type="text"
            value={typeof value === 'string' ? value : ''}
            required={required}
            disabled={disabled}
            onChange={(e) => onChange(path, e.target.value === '' && !required ? undefined : e.target.value)}
            {...described}
          />
          {hint}
        </div>
      )
    }
  }
  return (
    <JsonField
      id={id}
      text={text}
      value={value}
      path={path}
      disabled={disabled}
      onChange={onChange}
      hint={hint}
      described={described}
    />
  )
}

function JsonField(props: {
  id: string
  text: string
  value: unknown
  path: readonly string[]
  disabled: boolean
  onChange: FieldProps['onChange']
  hint: ReactNode
  described: object
}) {
  const [draft, setDraft] = useState(() => (props.value === undefined ? '' : JSON.stringify(props.value, null, 2)))
  const [bad, setBad] = useState(false)
  return (
    <div className="interlude-field">
      <label htmlFor={props.id}>{props.text} (JSON)</label>
      <textarea
        id={props.id}
        value={draft}
        disabled={props.disabled}
        aria-invalid={bad || undefined}
        onChange={(e) => {
          setDraft(e.target.value)
          try {
            props.onChange(props.path, e.target.value.trim() === '' ? undefined : JSON.parse(e.target.value))
            setBad(false)
          } catch {
            setBad(true)
          }
        }}
        {...props.described}
      />
      {props.hint}
    </div>
  )
}

function ApprovalQuestion({
  interrupt,
  form,
  id,
  disabled,
}: {
  interrupt: Interrupt
  form: UseInterruptFormResult
  id: string
  disabled: boolean
}) {
  const draft = form.drafts[interrupt.id]
  const payload = (draft?.status === 'resolved' ? draft.payload : undefined) as
    { approved?: boolean; editedArgs?: unknown; reason?: string } | undefined
  const choice =
    draft?.status === 'cancelled'
      ? 'cancel'
      : payload?.approved === true
        ? 'approve'
        : payload?.approved === false
          ? 'deny'
          : ''
  const edits = editedArgsSchema(interrupt) as Schema | undefined
  const reasonSchema = (interrupt.responseSchema as Schema | undefined)?.properties?.reason
  const errors = form.errors[interrupt.id]
  const radio = (value: string, text: string) => (
    <label>
      <input
        type="radio"
        name={`${id}-choice`}
        value={value}
        checked={choice === value}
        disabled={disabled}
        onChange={() =>
          value === 'approve'
            ? form.approve(interrupt.id)
            : value === 'deny'
              ? form.deny(interrupt.id)
              : form.cancel(interrupt.id)
        }
      />
      {text}
    </label>
  )
  return (
    <>
      <div role="radiogroup" aria-label="Decision">
        {radio('approve', 'Approve')}
        {radio('deny', 'Deny')}
        {radio('cancel', 'Cancel')}
      </div>
      {edits && choice === 'approve' && (
        <div className="interlude-edits">
          <input
            id={`${id}-edit`}
            type="checkbox"
            checked={payload?.editedArgs !== undefined}
            disabled={disabled}
            onChange={(e) =>
              form.setField(
                interrupt.id,
                ['editedArgs'],
                e.target.checked ? (form.toolArgs(interrupt) ?? {}) : undefined,
              )
            }
          />
          <label htmlFor={`${id}-edit`}>Edit arguments</label>
          {payload?.editedArgs !== undefined && (
            <Field
              id={`${id}-args`}
              name="editedArgs"
              schema={{ ...edits, title: edits.title ?? 'Arguments' }}
              value={payload.editedArgs}
              required
              path={['editedArgs']}
              errors={errors}
              disabled={disabled}
              onChange={(p, v) => form.setField(interrupt.id, p, v)}
            />
          )}
        </div>
      )}
      {reasonSchema && choice === 'deny' && (
        <Field
          id={`${id}-reason`}
          name="reason"
          schema={reasonSchema}
          value={payload?.reason}
          required={false}
          path={['reason']}
          errors={errors}
          disabled={disabled}
          onChange={(p, v) => form.setField(interrupt.id, p, v)}
        />
      )}
    </>
  )
}

function InputQuestion({
  interrupt,
  form,
  id,
  disabled,
}: {
  interrupt: Interrupt
  form: UseInterruptFormResult
  id: string
  disabled: boolean
}) {
  const draft = form.drafts[interrupt.id]
  const schema = (interrupt.responseSchema ?? {}) as Schema
  const cancelled = draft?.status === 'cancelled'
  return (
    <>
      {!cancelled && (
        <Field
          id={`${id}-answer`}
          name="Answer"
          schema={{ ...schema, title: schema.title ?? 'Answer' }}
          value={draft?.status === 'resolved' ? draft.payload : undefined}
          required
          path={[]}
          errors={form.errors[interrupt.id]}
          disabled={disabled}
          onChange={(p, v) =>
            p.length === 0 && v === undefined ? form.clear(interrupt.id) : form.setField(interrupt.id, p, v)
          }
        />
      )}
      <div className="interlude-field">
        <input
          id={`${id}-skip`}
          type="checkbox"
          checked={cancelled}
          disabled={disabled}
          onChange={(e) => (e.target.checked ? form.cancel(interrupt.id) : form.clear(interrupt.id))}
        />
        <label htmlFor={`${id}-skip`}>Cancel this question</label>
      </div>
    </>
  )
}

/**
 * The default accessible form for a batch: one fieldset per interrupt (legend = the server's
 * message), approve/deny/cancel radios for approval schemas (with `editedArgs` editing when the tool
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
    <form className="interlude-interrupt-form" aria-labelledby={`${baseId}-title`} onSubmit={submit} noValidate>
      <h2 id={`${baseId}-title`}>{title ?? 'The agent needs your answer'}</h2>
      {form.interrupts.map((interrupt, index) => {
        const id = `${baseId}-${index}`
        const missing = showMissing && form.drafts[interrupt.id] === undefined
        return (
          // Keyed by batch and interrupt: a new batch reusing interrupt ids starts with fresh field state.
          <fieldset
            key={`${form.batchId}:${interrupt.id}`}
            className="interlude-interrupt"
            aria-describedby={missing ? `${id}-missing` : undefined}
          >
            <legend>{interrupt.message ?? interrupt.reason}</legend>
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
      })}
      <div className="interlude-actions">
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
      {showMissing && !form.isValid && <p role="alert">Some answers are missing or invalid.</p>}
      {problem && <p role="alert">{problem}</p>}
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
