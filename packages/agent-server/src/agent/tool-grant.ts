import type { RememberScope } from '@interlude/protocol'
import { REMEMBER_SCOPES } from '@interlude/protocol'
import type { JsonSchema } from '../schema/json-schema.ts'

/**
 * A tool's bounded grants (docs/approvals.md#bounded-grants): what a person approving one call may also allow for
 * later calls — at most `maxCalls` of them, for at most `maxDuration` seconds, in the thread or in all of the owner's
 * threads, optionally only those whose `match` arguments are equal.
 */
export interface GrantOption<TArgs = unknown> {
  /** Where a grant may apply: later calls in the same thread, or in every thread of the owner. */
  readonly scopes: RememberScope | readonly RememberScope[]
  /** The most calls one grant may allow (a positive integer). */
  readonly maxCalls: number
  /** The longest a grant lasts, in seconds: its `until` is at most this far ahead, and this far when absent. */
  readonly maxDuration?: number
  /** Top-level arguments a grant's `match` may name (a later call must have them equal). @default none */
  readonly match?: readonly string[]
  /**
   * Which calls a grant may be offered with and may approve (e.g. only deploys to staging): a later call it returns
   * `false` for is never approved by a grant. A throwing `offers` means no. @default every call
   */
  offers?(args: TArgs): boolean
}

/** `GrantOption` after its checks at startup. */
export interface ResolvedGrant {
  readonly scopes: readonly RememberScope[]
  readonly maxCalls: number
  readonly maxDurationMs: number | undefined
  readonly match: readonly string[]
  /** The approval's responseSchema when a grant is offered: the tool's, with `grant`. */
  readonly approvalSchema: JsonSchema
}

const problem = (name: string, text: string) => new RangeError(`Tool "${name}": grant ${text}`)

/** Checks a tool's `grant` once at startup; `undefined` when it offers none. */
export function resolveGrant(
  name: string,
  option: GrantOption<never> | undefined,
  parameters: JsonSchema,
  approvalSchema: JsonSchema,
  human: boolean,
): ResolvedGrant | undefined {
  if (option === undefined) return undefined
  if (human) throw problem(name, 'is for approvals; a human tool has none.')
  const raw = (typeof option.scopes === 'string' ? [option.scopes] : [...(option.scopes ?? [])]) as unknown[]
  if (raw.length === 0 || raw.some((s) => !REMEMBER_SCOPES.includes(s as RememberScope)))
    throw problem(name, 'scopes must be "thread", "principal" or a list of them.')
  if (!Number.isInteger(option.maxCalls) || option.maxCalls < 1) throw problem(name, 'maxCalls must be an integer ≥ 1.')
  const { maxDuration } = option
  if (maxDuration !== undefined && !(Number.isFinite(maxDuration) && maxDuration > 0))
    throw problem(name, 'maxDuration must be a positive number of seconds.')
  const properties = (parameters.properties ?? {}) as Record<string, unknown>
  const match = [...(option.match ?? [])]
  for (const arg of match) {
    if (!(arg in properties)) throw problem(name, `match names "${arg}", which is not an argument.`)
    if (JSON.stringify(properties[arg]).includes('"$ref"'))
      throw problem(name, `match argument "${arg}" must not use $ref.`)
  }
  const scopes = REMEMBER_SCOPES.filter((s) => raw.includes(s))
  const schema = grantSchema(scopes, option.maxCalls, match, properties)
  const base = approvalSchema.properties as Record<string, unknown>
  return {
    scopes,
    maxCalls: option.maxCalls,
    maxDurationMs: maxDuration === undefined ? undefined : Math.round(maxDuration * 1000),
    match,
    approvalSchema: { ...approvalSchema, properties: { ...base, grant: schema } },
  }
}

/** The `grant` property of an approval answer (`GrantRequest` in `@interlude/protocol`). */
function grantSchema(
  scopes: readonly RememberScope[],
  maxCalls: number,
  match: readonly string[],
  properties: Record<string, unknown>,
): JsonSchema {
  const fields: Record<string, unknown> = {
    calls: { type: 'integer', minimum: 1, maximum: maxCalls, title: 'Calls' },
    until: { type: 'string', format: 'date-time', title: 'Until' },
    scope: { type: 'string', enum: [...scopes], title: 'Where' },
  }
  if (match.length > 0) {
    const only = Object.fromEntries(match.map((arg) => [arg, properties[arg]]))
    fields.match = { type: 'object', properties: only, additionalProperties: false, title: 'Only when' }
  }
  return {
    type: 'object',
    title: 'Also allow later calls',
    description: 'Let this many later matching calls run without asking (revocable).',
    properties: fields,
    required: ['calls', 'scope'],
    additionalProperties: false,
  }
}

/** Whether a call of a tool with this grant option may be offered or approved by a grant (a throwing check: no). */
export function grantOffered(option: GrantOption<never> | undefined, args: unknown): boolean {
  if (option === undefined) return false
  try {
    return option.offers === undefined || option.offers(args as never) === true
  } catch {
    return false
  }
}
