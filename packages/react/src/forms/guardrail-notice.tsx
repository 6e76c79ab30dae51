import { GUARDRAIL_INTERRUPT_REASON } from '@interlude/protocol'
import type { GuardrailMetadata, Interrupt } from '@interlude/protocol'

const WHAT: Readonly<Record<string, string>> = {
  input: 'The message',
  args: 'The arguments',
  output: 'The answer',
}

/**
 * An `interlude:guardrail` interrupt (docs/guardrails.md#the-guardrail-interrupt): which guardrail stopped what, its
 * reason, and the content in question — the call's arguments or the message's text — so a person can allow or block
 * it without app code.
 */
export function GuardrailNotice({ interrupt, id }: { interrupt: Interrupt; id: string }) {
  if (interrupt.reason !== GUARDRAIL_INTERRUPT_REASON) return null
  const m = (interrupt.metadata ?? {}) as Partial<GuardrailMetadata>
  const content =
    m.on === 'args' ? JSON.stringify(m.arguments ?? {}, null, 2) : typeof m.content === 'string' ? m.content : undefined
  return (
    <div className="interlude-guardrail" role="note" aria-labelledby={`${id}-guardrail-heading`}>
      <span id={`${id}-guardrail-heading`} className="interlude-call-heading">
        Stopped by the guardrail <strong>{m.guardrail ?? 'guardrail'}</strong>
        {m.on === 'args' && m.toolName !== undefined ? ` on ${m.toolName}` : ''}
      </span>
      {m.reason !== undefined && <p className="interlude-guardrail-reason">{m.reason}</p>}
      {content !== undefined && (
        <figure className="interlude-guardrail-content">
          <figcaption>{WHAT[m.on ?? ''] ?? 'The content'} in question</figcaption>
          <pre>
            <code>{content}</code>
          </pre>
        </figure>
      )}
      <p className="interlude-guardrail-hint">Allow lets it through; block drops it (a note says why).</p>
    </div>
  )
}
