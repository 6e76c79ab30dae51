import type { DecisionLinkAction, ResumeEntry } from '@interlude/protocol'
import type { ValidatorCache } from '../../schema/validator-cache.ts'
import type { StoredInterrupt } from '../../store/store.ts'

/** The payload a decision link or a Slack button gives every interrupt of its batch. */
export function actionPayload(action: DecisionLinkAction): { readonly approved: boolean } {
  return { approved: action === 'approve' }
}

/**
 * Whether a batch can be decided outside the app (docs/approvals.md#deciding-outside-the-app): both answers,
 * `{ approved: true }` and `{ approved: false }`, fit every interrupt's `responseSchema` — tool approvals, guardrail
 * and budget questions; not a human tool's question, which needs the person's own answer.
 */
export function decidableOutside(validators: ValidatorCache, interrupts: readonly StoredInterrupt[]): boolean {
  if (interrupts.length === 0) return false
  return interrupts.every(({ interrupt }) => {
    const schema = interrupt.responseSchema
    if (schema === undefined) return false
    return (['approve', 'deny'] as const).every((action) => validators.validate(schema, actionPayload(action)).ok)
  })
}

/** The resume entries of one action: the same answer for every interrupt of the batch. */
export function actionEntries(interrupts: readonly StoredInterrupt[], action: DecisionLinkAction): ResumeEntry[] {
  return interrupts.map(({ interrupt }) => ({
    interruptId: interrupt.id,
    status: 'resolved',
    payload: actionPayload(action),
  }))
}
