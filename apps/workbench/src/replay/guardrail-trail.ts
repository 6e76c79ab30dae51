import { GUARDRAIL_EVENT_NAME } from '@interlude/protocol'
import type { GuardrailEvent } from '@interlude/protocol'

/** The value of a `CUSTOM interlude.guardrail` event (docs/guardrails.md#events), or `undefined` for anything else. */
export function guardrailFromEvent(event: unknown): GuardrailEvent | undefined {
  if (typeof event !== 'object' || event === null) return undefined
  const e = event as { type?: unknown; name?: unknown; value?: unknown }
  if (e.type !== 'CUSTOM' || e.name !== GUARDRAIL_EVENT_NAME || typeof e.value !== 'object' || e.value === null)
    return undefined
  const v = e.value as Partial<GuardrailEvent>
  return typeof v.name === 'string' && typeof v.on === 'string' && typeof v.pass === 'boolean'
    ? (v as GuardrailEvent)
    : undefined
}

/** One line of the inspector: "semver on args · failed: not a version · asks a person". */
export function guardrailLine(event: GuardrailEvent): string {
  const verdict = event.pass ? 'passed' : `failed${event.reason ? `: ${event.reason}` : ''}`
  const action =
    event.action === 'allow'
      ? ' · allowed by a person'
      : event.action === 'block'
        ? ' · blocked by a person'
        : event.action === 'human'
          ? ' · asks a person'
          : event.action === 'retry'
            ? ' · the model is asked again'
            : event.action === 'fail'
              ? ' · the run fails'
              : ''
  const subject = event.toolCallId ?? event.messageId
  return `${event.name} on ${event.on}${subject ? ` (${subject})` : ''} · ${verdict}${action}`
}
