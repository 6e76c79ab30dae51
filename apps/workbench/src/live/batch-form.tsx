import { useEffect, useId, useState } from 'react'
import type { Choice, Choices, Decision, InterruptLike } from './answers.ts'
import { allowsEdits, allowsReason, answerBatch, earliestExpiry, fieldsOf, isApprovalSchema, originalArgs } from './answers.ts'

export interface BatchFormProps {
  readonly batchId: string
  readonly interrupts: readonly InterruptLike[]
  readonly choices: Choices
  readonly onChoicesChange: (choices: Choices) => void
  /** Called with the complete entries (or every entry cancelled). */
  readonly onSubmit: (entries: ReturnType<typeof answerBatch> & { ok: true }) => void
  /** Disables every control (resuming, recovery required, replay). */
  readonly disabled: boolean
  readonly now?: () => number
}

/**
 * The pending batch as one form: every interrupt gets its own labelled group (approve / deny /
 * edit arguments / cancel for tool approvals; schema fields for questions), and one submit sends
 * every answer together. An expired batch stays visible but cannot be submitted.
 */
export function BatchForm({ batchId, interrupts, choices, onChoicesChange, onSubmit, disabled, now = Date.now }: BatchFormProps) {
  const expiresAt = earliestExpiry(interrupts)
  const expired = useExpired(expiresAt, now)
  const [showProblems, setShowProblems] = useState(false)
  const answer = answerBatch(interrupts, choices)
  const locked = disabled || expired

  const setChoice = (id: string, choice: Choice) => onChoicesChange({ ...choices, [id]: choice })

  return (
    <form
      className="batch"
      aria-label="Pending approvals"
      data-batch-id={batchId}
      data-expired={expired ? 'true' : 'false'}
      onSubmit={(e) => {
        e.preventDefault()
        if (locked) return
        if (!answer.ok) {
          setShowProblems(true)
          return
        }
        onSubmit(answer)
      }}
    >
      <header className="batch-head">
        <h2>
          {interrupts.length === 1 ? 'The assistant is waiting for your answer' : `The assistant is waiting for ${interrupts.length} answers`}
        </h2>
        {expiresAt !== undefined && !expired && <span className="muted">expires {new Date(expiresAt).toLocaleTimeString()}</span>}
      </header>
      {expired && (
        <p className="error" role="alert" data-testid="batch-expired">
          This request expired at {new Date(expiresAt ?? 0).toLocaleTimeString()} and can no longer be answered. Start a new conversation to continue.
        </p>
      )}
      <ol className="interrupts">
        {interrupts.map((interrupt) => (
          <li key={interrupt.id} className="interrupt" data-interrupt-id={interrupt.id}>
            <InterruptFields
              interrupt={interrupt}
              choice={choices[interrupt.id] ?? {}}
              onChange={(choice) => setChoice(interrupt.id, choice)}
              disabled={locked}
              problem={showProblems && !answer.ok ? answer.problems[interrupt.id] : undefined}
            />
          </li>
        ))}
      </ol>
      <div className="batch-actions">
        <button type="submit" className="primary" disabled={locked}>
          Submit answers
        </button>
        {interrupts.some((i) => isApprovalSchema(i.responseSchema)) && (
          <button
            type="button"
            disabled={locked}
            onClick={() => onChoicesChange(Object.fromEntries(interrupts.map((i) => [i.id, isApprovalSchema(i.responseSchema) ? { ...choices[i.id], decision: 'approve' as const } : (choices[i.id] ?? {})])))}
          >
            Approve all
          </button>
        )}
        <button
          type="button"
          disabled={locked}
          onClick={() => {
            const all: Choices = Object.fromEntries(interrupts.map((i) => [i.id, { decision: 'cancel' as const }]))
            onChoicesChange(all)
            const cancelled = answerBatch(interrupts, all)
            if (cancelled.ok) onSubmit(cancelled)
          }}
        >
          Cancel all
        </button>
        {showProblems && !answer.ok && (
          <span className="error" role="alert">
            Every question needs an answer before the batch can be sent.
          </span>
        )}
      </div>
    </form>
  )
}

function useExpired(expiresAt: number | undefined, now: () => number): boolean {
  const [expired, setExpired] = useState(() => expiresAt !== undefined && now() >= expiresAt)
  useEffect(() => {
    if (expiresAt === undefined) {
      setExpired(false)
      return
    }
    const left = expiresAt - now()
    if (left <= 0) {
      setExpired(true)
      return
    }
    setExpired(false)
    // Re-render when the batch expires (setTimeout caps at ~24.8 days).
    const timer = setTimeout(() => setExpired(true), Math.min(left + 5, 2 ** 31 - 1))
    return () => clearTimeout(timer)
  }, [expiresAt, now])
  return expired
}

interface InterruptFieldsProps {
  readonly interrupt: InterruptLike
  readonly choice: Choice
  readonly onChange: (choice: Choice) => void
  readonly disabled: boolean
  readonly problem: string | undefined
}

function InterruptFields({ interrupt, choice, onChange, disabled, problem }: InterruptFieldsProps) {
  const id = useId()
  const toolName = typeof interrupt.metadata?.toolName === 'string' ? interrupt.metadata.toolName : undefined
  const title = toolName ?? (interrupt.reason === 'input_required' ? 'Question' : interrupt.reason)
  const approval = isApprovalSchema(interrupt.responseSchema)
  const args = originalArgs(interrupt)
  return (
    <fieldset className="interrupt-fields" disabled={disabled} aria-describedby={problem ? `${id}-problem` : undefined}>
      <legend>
        <span className="badge">{interrupt.reason}</span> <span className="interrupt-title">{title}</span>
      </legend>
      {interrupt.message !== undefined && <p className="interrupt-message">{interrupt.message}</p>}
      {approval && args !== undefined && <pre className="tool-args">{JSON.stringify(args, null, 2)}</pre>}
      {approval ? (
        <ApprovalFields interrupt={interrupt} choice={choice} onChange={onChange} name={`${id}-decision`} args={args} />
      ) : (
        <AnswerFields interrupt={interrupt} choice={choice} onChange={onChange} idPrefix={id} />
      )}
      {problem !== undefined && (
        <p id={`${id}-problem`} className="error field-problem">
          {problem}
        </p>
      )}
    </fieldset>
  )
}

function ApprovalFields({ interrupt, choice, onChange, name, args }: { readonly interrupt: InterruptLike; readonly choice: Choice; readonly onChange: (c: Choice) => void; readonly name: string; readonly args: unknown }) {
  const options: { value: Decision; label: string }[] = [
    { value: 'approve', label: 'Approve' },
    { value: 'deny', label: 'Deny' },
    ...(allowsEdits(interrupt) ? [{ value: 'edit' as const, label: 'Edit arguments' }] : []),
    { value: 'cancel', label: 'Cancel' },
  ]
  const pick = (decision: Decision) => {
    if (decision === 'edit' && choice.editedArgs === undefined) onChange({ ...choice, decision, editedArgs: JSON.stringify(args ?? {}, null, 2) })
    else onChange({ ...choice, decision })
  }
  return (
    <>
      <div className="decision-options" role="radiogroup" aria-label={`Decision for ${String(interrupt.metadata?.toolName ?? interrupt.id)}`}>
        {options.map((option) => (
          <label key={option.value} className="decision">
            <input type="radio" name={name} value={option.value} checked={choice.decision === option.value} onChange={() => pick(option.value)} />
            {option.label}
          </label>
        ))}
      </div>
      {choice.decision === 'edit' && (
        <label className="field">
          Edited arguments (JSON, replaces the arguments)
          <textarea rows={4} value={choice.editedArgs ?? ''} onChange={(e) => onChange({ ...choice, editedArgs: e.target.value })} spellCheck={false} />
        </label>
      )}
      {(choice.decision === 'deny' || choice.decision === 'approve' || choice.decision === 'edit') && allowsReason(interrupt) && (
        <label className="field">
          Reason (optional)
          <input type="text" value={choice.reason ?? ''} onChange={(e) => onChange({ ...choice, reason: e.target.value })} />
        </label>
      )}
    </>
  )
}

function AnswerFields({ interrupt, choice, onChange, idPrefix }: { readonly interrupt: InterruptLike; readonly choice: Choice; readonly onChange: (c: Choice) => void; readonly idPrefix: string }) {
  const fields = fieldsOf(interrupt.responseSchema)
  const cancelled = choice.decision === 'cancel'
  const setValue = (name: string, value: string | boolean) => onChange({ ...choice, decision: 'answer', values: { ...choice.values, [name]: value } })
  return (
    <>
      {fields.map((field) => {
        const fieldId = `${idPrefix}-${field.name}`
        const label = `${field.title ?? field.name}${field.required ? '' : ' (optional)'}`
        const value = choice.values?.[field.name]
        if (field.kind === 'boolean') {
          return (
            <label key={field.name} className="field field-inline">
              <input type="checkbox" checked={value === true} disabled={cancelled} onChange={(e) => setValue(field.name, e.target.checked)} /> {label}
            </label>
          )
        }
        return (
          <div key={field.name} className="field">
            <label htmlFor={fieldId}>{label}</label>
            {field.kind === 'enum' ? (
              <select id={fieldId} value={typeof value === 'string' ? value : ''} disabled={cancelled} onChange={(e) => setValue(field.name, e.target.value)}>
                <option value="">Choose…</option>
                {(field.options ?? []).map((option) => (
                  <option key={option} value={option}>
                    {option}
                  </option>
                ))}
              </select>
            ) : (
              <input
                id={fieldId}
                type={field.kind === 'number' || field.kind === 'integer' ? 'number' : 'text'}
                value={typeof value === 'string' ? value : ''}
                disabled={cancelled}
                onChange={(e) => setValue(field.name, e.target.value)}
              />
            )}
            {field.description !== undefined && <span className="muted">{field.description}</span>}
          </div>
        )
      })}
      <label className="field field-inline">
        <input type="checkbox" checked={cancelled} onChange={(e) => onChange(e.target.checked ? { ...choice, decision: 'cancel' } : { ...choice, decision: 'answer' })} /> Cancel this question
      </label>
    </>
  )
}
