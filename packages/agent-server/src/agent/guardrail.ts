import type { GuardrailOn, GuardrailOnFail } from '@interlude/protocol'
import { GUARDRAIL_ON } from '@interlude/protocol'
import type { DecideContext } from './decider.ts'
import type { JsonSchema } from '../schema/json-schema.ts'

/** What a guardrail's `check` answers: pass, or fail with a reason a person (and the model, on retry) reads. */
export type GuardrailResult = { readonly pass: true } | { readonly pass: false; readonly reason: string }

/** What a guardrail's `check` sees besides the value. */
export interface GuardrailContext {
  readonly threadId: string
  readonly runId: string
  readonly principal: string
  /** `on: 'args'`: the tool and the call. */
  readonly toolName?: string
  readonly toolCallId?: string
}

/**
 * A guardrail (docs/guardrails.md): a check of a user message (`on: 'input'`), a tool call's arguments (`'args'`) or
 * the assistant's final text of a response (`'output'`). A failed check does what `onFail` says: `'human'` pauses with
 * an `interlude:guardrail` interrupt (`{ action: "allow" | "block", note? }`), `'retry'` asks the model again with the
 * reason (at most `maxRetries` times per run, then a person), `'fail'` ends the run with `RUN_ERROR GUARDRAIL_FAILED`.
 * A `check` that throws ends the run with `GUARDRAIL_FAILED` too: a guardrail never passes by accident.
 * @example
 * { name: 'semver', on: 'args', onFail: 'human',
 *   check: (args) => /^v\d+(\.\d+){0,2}$/.test(args.version) ? { pass: true } : { pass: false, reason: 'not semver' } }
 */
export interface GuardrailDefinition<TValue = unknown> {
  /** Unique per agent (one definition may sit on several tools). */
  readonly name: string
  readonly on: GuardrailOn
  /** `input`/`output`: the text; `args`: the parsed, schema-valid arguments. Keep it fast and side-effect free. */
  check(value: TValue, ctx: GuardrailContext): GuardrailResult | Promise<GuardrailResult>
  /** @default 'human' */
  readonly onFail?: GuardrailOnFail
  /** `onFail: 'retry'`: how often the model is asked again in one run before a person is. @default 2 */
  readonly maxRetries?: number
  /** Who may decide this guardrail's interrupts (a compliance group), narrowing the server's `canDecide`. */
  readonly approvers?: readonly string[] | ((principal: string, ctx: DecideContext) => boolean | Promise<boolean>)
  /** With `approvers`, whether the thread's owner may decide too. @default false */
  readonly allowSelfApproval?: boolean
}

export interface ResolvedGuardrail {
  readonly definition: GuardrailDefinition
  readonly name: string
  readonly on: GuardrailOn
  readonly onFail: GuardrailOnFail
  readonly maxRetries: number
}

const NAME = /^[\w.:-]{1,64}$/

/** Checks one definition at startup (a bad guardrail fails the server, never a run). */
export function resolveGuardrail(definition: GuardrailDefinition, where: string): ResolvedGuardrail {
  const { name, on } = definition
  if (typeof name !== 'string' || !NAME.test(name))
    throw new RangeError(`${where}: guardrail name "${String(name)}" must match ${NAME.source}.`)
  if (!GUARDRAIL_ON.includes(on)) throw new RangeError(`${where}: guardrail "${name}" needs on: input, args or output.`)
  if (typeof definition.check !== 'function') throw new RangeError(`${where}: guardrail "${name}" needs check().`)
  const onFail = definition.onFail ?? 'human'
  if (!['human', 'retry', 'fail'].includes(onFail))
    throw new RangeError(`${where}: guardrail "${name}": onFail must be human, retry or fail.`)
  // A user message cannot be written again by the model: there is nothing to retry.
  if (onFail === 'retry' && on === 'input')
    throw new RangeError(`${where}: guardrail "${name}": an input guardrail cannot retry.`)
  const maxRetries = definition.maxRetries ?? 2
  if (!Number.isInteger(maxRetries) || maxRetries < 0)
    throw new RangeError(`${where}: guardrail "${name}": maxRetries must be a non-negative integer.`)
  if (Array.isArray(definition.approvers) && definition.approvers.length === 0)
    throw new RangeError(`${where}: guardrail "${name}": approvers is empty; name at least one principal.`)
  return { definition, name, on, onFail, maxRetries }
}

/**
 * Every guardrail of an agent by name — its own and its tools' — so a decision on a guardrail interrupt finds the
 * guardrail's deciders. One name, one definition: the same guardrail may sit on several tools.
 */
export function guardrailsByName(
  own: readonly ResolvedGuardrail[],
  tools: Iterable<readonly ResolvedGuardrail[]>,
): ReadonlyMap<string, ResolvedGuardrail> {
  const byName = new Map<string, ResolvedGuardrail>()
  for (const list of [own, ...tools]) {
    for (const g of list) {
      const known = byName.get(g.name)
      if (known !== undefined && known.definition !== g.definition)
        throw new RangeError(`Two different guardrails are named "${g.name}".`)
      byName.set(g.name, g)
    }
  }
  return byName
}

/** The answer schema of an `interlude:guardrail` interrupt. */
export const GUARDRAIL_RESPONSE_SCHEMA: JsonSchema = {
  type: 'object',
  properties: {
    action: { type: 'string', enum: ['allow', 'block'] },
    note: { type: 'string', maxLength: 2000 },
  },
  required: ['action'],
  additionalProperties: false,
}

/** The answer schema of an `interlude:budget` interrupt (a cancelled entry denies). */
export const BUDGET_RESPONSE_SCHEMA: JsonSchema = {
  type: 'object',
  properties: { extend: { type: 'integer', minimum: 1, maximum: 1_000_000_000 } },
  required: ['extend'],
  additionalProperties: false,
}
