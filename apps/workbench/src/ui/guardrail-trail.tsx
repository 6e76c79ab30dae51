import type { GuardrailEvent } from '@interlude/protocol'
import { guardrailLine } from '../replay/guardrail-trail.ts'

/**
 * The guardrail checks of a thread's stream up to a frame (docs/guardrails.md#events): one line per check and per
 * decision on a failed one, passes and failures marked.
 */
export function GuardrailTrail({ events }: { readonly events: readonly GuardrailEvent[] }) {
  if (events.length === 0) return null
  return (
    <ul className="guardrail-trail" aria-label="Guardrails at this frame">
      {events.map((event, i) => (
        <li
          key={i}
          className={`guardrail guardrail-${event.pass ? 'pass' : 'fail'}`}
          data-testid="guardrail"
          data-pass={String(event.pass)}
        >
          {guardrailLine(event)}
        </li>
      ))}
    </ul>
  )
}
