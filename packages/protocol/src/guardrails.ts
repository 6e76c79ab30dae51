/**
 * Guardrails and budgets ask a person (docs/guardrails.md): the names and shapes a server streams and a client reads.
 * A failed guardrail with `onFail: 'human'` and a reached budget pause the run with an interrupt, answered through the
 * same admission as any other.
 */

/** Where a guardrail looks: a user message, a tool call's arguments, or the assistant's final text of a response. */
export type GuardrailOn = 'input' | 'args' | 'output'
export const GUARDRAIL_ON: readonly GuardrailOn[] = ['input', 'args', 'output']

/** What a failed guardrail does: ask a person, ask the model again (then a person), or end the run. */
export type GuardrailOnFail = 'human' | 'retry' | 'fail'

/** `CUSTOM { name, value: GuardrailEvent }`, one for every check and one for every decision on a failed one. */
export const GUARDRAIL_EVENT_NAME = 'interlude.guardrail'

/** The reason of the interrupt a failed `onFail: 'human'` guardrail pauses with. */
export const GUARDRAIL_INTERRUPT_REASON = 'interlude:guardrail'

/** The reason of the interrupt a reached budget (`maxIterations`, `maxTokensPerRun`) pauses with. */
export const BUDGET_INTERRUPT_REASON = 'interlude:budget'

/**
 * `value` of an `interlude.guardrail` event. A check: `pass`, and `reason` when it failed, with `action` the guardrail's
 * `onFail` (`retry`: the failed text is dropped and the model asked again). A decision on a failed check: `action`
 * `allow` or `block` (the person's answer), `pass` stays `false`.
 */
export interface GuardrailEvent {
  readonly name: string
  readonly on: GuardrailOn
  readonly pass: boolean
  readonly reason?: string
  readonly action?: GuardrailOnFail | GuardrailAction
  /** `on: 'args'`: the call checked. */
  readonly toolCallId?: string
  /** `on: 'output'` / `'input'`: the message checked. */
  readonly messageId?: string
}

/** A person's answer to an `interlude:guardrail` interrupt. */
export type GuardrailAction = 'allow' | 'block'

/** The payload of an `interlude:guardrail` interrupt's answer. */
export interface GuardrailAnswer {
  readonly action: GuardrailAction
  /** Why: for `block`, what the model (and the record) is told. */
  readonly note?: string
}

/** `metadata` of an `interlude:guardrail` interrupt. */
export interface GuardrailMetadata {
  readonly guardrail: string
  readonly on: GuardrailOn
  readonly reason: string
  /** `on: 'args'`: the call, its tool and arguments. */
  readonly toolCallId?: string
  readonly toolName?: string
  readonly arguments?: unknown
  /** `on: 'output'` / `'input'`: the message in question and its text. */
  readonly messageId?: string
  readonly content?: string
}

/** Which budget a run reached. */
export type BudgetKind = 'iterations' | 'tokens'

/** `metadata` of an `interlude:budget` interrupt: what was used of which limit. */
export interface BudgetMetadata {
  readonly kind: BudgetKind
  readonly used: number
  readonly limit: number
}

/** The payload of an `interlude:budget` interrupt's answer: that much more (model calls, or tokens). Cancel denies. */
export interface BudgetAnswer {
  readonly extend: number
}

/** Why a run ended the way it did, beside `outcome.type` (`RUN_FINISHED` and `GET …/runs/:runId`). */
export type OutcomeReason = 'budget_exhausted' | 'guardrail_blocked' | 'max_iterations' | 'interrupted' | 'cancelled'
export const OUTCOME_REASONS: readonly OutcomeReason[] = [
  'budget_exhausted',
  'guardrail_blocked',
  'max_iterations',
  'interrupted',
  'cancelled',
]

/**
 * An assistant text a failed output guardrail holds back (`ThreadSnapshot.withheld`): streamed already, not in the
 * history until a person allows it; blocked, it never joins it.
 */
export interface WithheldMessage {
  readonly messageId: string
  readonly interruptId: string
  readonly guardrail: string
  readonly reason: string
  readonly content: string
}
