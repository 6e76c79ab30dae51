import type { GuardrailAnswer } from '@interlude/protocol'
import { GuardrailNotice } from './guardrail-notice.tsx'
import type { QuestionProps } from './interrupt-questions.tsx'

/**
 * An `interlude:guardrail` interrupt (docs/guardrails.md#the-guardrail-interrupt): what failed and the content in
 * question, then Allow / Block, and a note (for a block, the model and the record read it).
 */
export function GuardrailQuestion({ interrupt, form, id, disabled }: QuestionProps) {
  const draft = form.drafts[interrupt.id]
  const answer = (draft?.status === 'resolved' ? draft.payload : undefined) as Partial<GuardrailAnswer> | undefined
  const choose = (action: GuardrailAnswer['action']) =>
    form.setPayload(interrupt.id, (previous: unknown) => ({ ...(previous as object | undefined), action }))
  const radio = (action: GuardrailAnswer['action'], label: string) => (
    <label>
      <input
        type="radio"
        name={`${id}-action`}
        value={action}
        checked={answer?.action === action}
        disabled={disabled}
        onChange={() => choose(action)}
      />
      {label}
    </label>
  )
  return (
    <>
      <GuardrailNotice interrupt={interrupt} id={id} />
      <div role="radiogroup" aria-label="Decision">
        {radio('allow', 'Allow')}
        {radio('block', 'Block')}
      </div>
      {answer?.action !== undefined && (
        <div className="interlude-field">
          <label htmlFor={`${id}-note`}>Note</label>
          <textarea
            id={`${id}-note`}
            value={answer.note ?? ''}
            maxLength={2000}
            disabled={disabled}
            onChange={(e) => form.setField(interrupt.id, ['note'], e.target.value === '' ? undefined : e.target.value)}
          />
        </div>
      )}
    </>
  )
}
