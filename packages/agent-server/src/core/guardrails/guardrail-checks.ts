import { randomUUID } from 'node:crypto'
import { EventType, GUARDRAIL_EVENT_NAME, InterludeError } from '@interlude/protocol'
import type { AgUiEvent, GuardrailEvent } from '@interlude/protocol'
import type { GuardrailContext, ResolvedGuardrail } from '../../agent/guardrail.ts'

/** A failed check: which guardrail, its reason, and what it does now (`retry` past `maxRetries` is `human`). */
export interface GuardrailFailure {
  readonly guardrail: ResolvedGuardrail
  readonly reason: string
  readonly onFail: 'human' | 'retry'
}

/** What a check is about: the call (`args`) or the message (`input`, `output`). */
export interface CheckedSubject {
  readonly toolCallId?: string
  readonly messageId?: string
}

/** `CUSTOM interlude.guardrail` (docs/guardrails.md#events). */
export function guardrailEvent(value: GuardrailEvent): AgUiEvent {
  return { type: EventType.CUSTOM, name: GUARDRAIL_EVENT_NAME, value } as AgUiEvent
}

/**
 * Runs the guardrails in order, one `interlude.guardrail` event per check, and stops at the first that fails. Fail
 * closed (docs/guardrails.md#fail-closed): a check that throws, or answers anything but `{ pass: true }` or
 * `{ pass: false, reason }`, ends the run with `GUARDRAIL_FAILED` — its text only goes to the log. A failure of an
 * `onFail: 'fail'` guardrail ends it the same way.
 */
export async function* runChecks(
  guardrails: readonly ResolvedGuardrail[],
  value: unknown,
  ctx: GuardrailContext,
  subject: CheckedSubject,
  logError: (message: string, error: unknown) => void,
  mayRetry: (guardrail: ResolvedGuardrail) => boolean = () => false,
): AsyncGenerator<AgUiEvent, GuardrailFailure | undefined, undefined> {
  for (const guardrail of guardrails) {
    const { name, on } = guardrail
    let pass: boolean
    let reason = ''
    try {
      const result: unknown = await guardrail.definition.check(value, ctx)
      const shape = (result ?? {}) as { pass?: unknown; reason?: unknown }
      if (shape.pass === true) pass = true
      else if (shape.pass === false && typeof shape.reason === 'string') {
        pass = false
        reason = shape.reason.slice(0, 2000)
      } else throw new TypeError('a guardrail must answer { pass: true } or { pass: false, reason }')
    } catch (error) {
      logError(`guardrail ${name} threw`, error)
      yield guardrailEvent({ name, on, pass: false, reason: 'The check failed.', action: 'fail', ...subject })
      throw new InterludeError(
        'GUARDRAIL_FAILED',
        `The guardrail "${name}" could not check this; nothing was let through.`,
      )
    }
    if (pass) {
      yield guardrailEvent({ name, on, pass: true, ...subject })
      continue
    }
    const onFail = guardrail.onFail === 'retry' && !mayRetry(guardrail) ? 'human' : guardrail.onFail
    yield guardrailEvent({ name, on, pass: false, reason, action: onFail, ...subject })
    if (onFail === 'fail')
      throw new InterludeError('GUARDRAIL_FAILED', `The guardrail "${name}" failed: ${reason}`, {
        details: { guardrail: name, on, reason },
      })
    return { guardrail, reason, onFail }
  }
  return undefined
}

/** A fresh interrupt id (guardrail and budget interrupts are not asked by a tool). */
export function interruptId(): string {
  return `int_${randomUUID()}`
}
