import { GUARDRAIL_INTERRUPT_REASON } from '@interlude/protocol'
import type { Interrupt } from '@interlude/protocol'
import { CallArguments } from './call-arguments.tsx'
import { ChoiceField } from './choice-field.tsx'
import { StaleNotice } from './stale-notice.tsx'
import { GuardrailQuestion } from './guardrail-question.tsx'
import { GrantField } from './grant-field.tsx'
import { BudgetNotice } from './budget-notice.tsx'
import { text } from './schema.ts'
import { SchemaField, type Schema } from './schema-field.tsx'
import { editedArgsSchema, type UseInterruptFormResult } from './use-interrupt-form.ts'

/** One question of the batch: the interrupt, the form that holds every draft, its element id base. */
export interface QuestionProps {
  readonly interrupt: Interrupt
  readonly form: UseInterruptFormResult
  readonly id: string
  readonly disabled: boolean
}

/** A tool approval: approve, deny (with a reason when the schema has one), edit the arguments, or cancel. */
export function ApprovalQuestion({ interrupt, form, id, disabled }: QuestionProps) {
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
  const rememberScopes = rememberScopesOf(interrupt)
  const remember = (payload as { remember?: unknown } | undefined)?.remember
  const errors = form.errors[interrupt.id]
  const description = text((interrupt.responseSchema as Schema | undefined)?.description)
  const args = form.toolArgs(interrupt)
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
      {description !== undefined && <p className="interlude-interrupt-description">{description}</p>}
      <StaleNotice interrupt={interrupt} id={id} />
      <CallArguments id={id} args={args} edited={choice === 'approve' ? payload?.editedArgs : undefined} />
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
            <SchemaField
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
      {rememberScopes.length > 0 && choice === 'approve' && (
        <ChoiceField
          id={`${id}-remember`}
          text="Remember this approval"
          choices={[
            { value: undefined, label: 'Just this once' },
            ...rememberScopes.map((scope) => ({ value: scope, label: REMEMBER_LABELS[scope] ?? scope })),
          ]}
          value={remember}
          required
          radio
          disabled={disabled}
          describedBy={undefined}
          invalid={false}
          onChange={(v) => form.setField(interrupt.id, ['remember'], v)}
        />
      )}
      {choice === 'approve' && (
        <GrantField
          interrupt={interrupt}
          form={form}
          id={id}
          disabled={disabled}
          value={(payload as { grant?: unknown } | undefined)?.grant}
        />
      )}
      {reasonSchema && choice === 'deny' && (
        <SchemaField
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

/** An `input_required` (or other) interrupt: a schema-driven form over its `responseSchema`, or cancel. */
export function InputQuestion({ interrupt, form, id, disabled }: QuestionProps) {
  if (interrupt.reason === GUARDRAIL_INTERRUPT_REASON)
    return <GuardrailQuestion interrupt={interrupt} form={form} id={id} disabled={disabled} />
  const draft = form.drafts[interrupt.id]
  const schema = (interrupt.responseSchema ?? {}) as Schema
  const cancelled = draft?.status === 'cancelled'
  return (
    <>
      <BudgetNotice interrupt={interrupt} id={id} />
      {!cancelled && (
        <SchemaField
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

const REMEMBER_LABELS: Readonly<Record<string, string>> = {
  thread: 'Always in this conversation',
  principal: 'Always, in all my conversations',
}

/** The scopes an approval may be remembered for (`remember` in its schema: docs/approvals.md#remembered-permissions). */
function rememberScopesOf(interrupt: Interrupt): string[] {
  const remember = (interrupt.responseSchema as Schema | undefined)?.properties?.remember
  const values = remember?.enum as unknown
  return Array.isArray(values) ? values.filter((v): v is string => typeof v === 'string' && v in REMEMBER_LABELS) : []
}
