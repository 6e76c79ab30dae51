import { z } from 'zod'
import type { InterruptExpiryPolicy, RememberScope } from '@interlude/protocol'
import { REMEMBER_SCOPES } from '@interlude/protocol'
import type { JsonSchema } from '../schema/json-schema.ts'
import { remoteRefs, SchemaDefinitionError } from '../schema/validator-cache.ts'
import type { DecideContext } from './decider.ts'
import type { ToolInterruptRequest } from './tool-interrupt.ts'
import type { SubagentSpec } from './subagent-tool.ts'
import type { ResolvedAgent } from './agent.ts'
import type { GuardrailDefinition } from './guardrail.ts'
import { expiryOptionProblem, secondsToMs, timeoutProblem } from './expiry-options.ts'
import type { DecisionPolicy } from './decision-policy.ts'
export type { DecisionPolicy, DecisionStage } from './decision-policy.ts'
import { decisionPolicyProblem } from './decision-policy.ts'
import type { GrantOption, ResolvedGrant } from './tool-grant.ts'
import { resolveGrant } from './tool-grant.ts'

export type { JsonSchema }

/** What a tool receives besides its arguments. */
export interface ToolContext<TState = unknown> {
  /** The model's id for this call. */
  readonly toolCallId: string
  /** Equal to `toolCallId`: pass it to the system that performs the effect so a retry is a no-op. */
  readonly idempotencyKey: string
  readonly threadId: string
  readonly runId: string
  /** The authenticated principal that owns the thread. */
  readonly principal: string
  /** A private copy of the thread state at call time. */
  readonly state: TState
  /** Replaces the thread state; committed together with the tool's result in the effects ledger. */
  updateState(update: (state: TState) => TState): void
  /** Aborted only when the server closes (`close()`); a cancel or a graceful shutdown waits for a running tool to finish (a cancel is checked before a tool starts). */
  readonly signal: AbortSignal
  /**
   * Asks a person from inside `execute` (docs/approvals.md#asking-from-inside-a-tool): the turn pauses with this
   * interrupt and, once it is answered, `execute` runs again **from the top**; each `ctx.interrupt` call then returns
   * the stored answers in order, and the first call past them asks the next question. Code before a `ctx.interrupt`
   * therefore runs again on every resume and must be idempotent. A cancelled question throws
   * `InterruptCancelledError`. The answer was validated against `responseSchema`.
   */
  interrupt<TAnswer = unknown>(request: ToolInterruptRequest): Promise<TAnswer>
  /**
   * A memoised step (docs/approvals.md#memoised-steps): the first time, runs `fn` and stores its JSON result durably,
   * keyed by this call, `name` and the occurrence of `name` in this execution (the second `step('x')` is another
   * step than the first); on every later execution of this call — after a `ctx.interrupt` answer, after a crash —
   * returns the stored result without calling `fn`. Put side effects before a question in steps. The state the tool
   * changed so far (`updateState`) is committed with the step. `fn`'s result must be JSON (`undefined` is `null`).
   * @example
   * const snapshot = await ctx.step('snapshot', () => fleet.snapshot(args.version))
   */
  step<TResult>(name: string, fn: () => TResult | Promise<TResult>): Promise<TResult>
  /**
   * Set only for a subagent tool (`defineSubagentTool`, docs/approvals.md#subagents): runs its agent with this call's
   * context. Its `execute` calls it, so a wrapper around `execute` (logging, gating) wraps the subagent too.
   */
  readonly runSubagent?: (args: unknown) => Promise<unknown>
}

/** What `reconcile` receives: the call's ids, the thread state and the way to change it. */
export interface ReconcileContext<TState = unknown> {
  readonly toolCallId: string
  readonly idempotencyKey: string
  readonly threadId: string
  /** The run that started the call (and died). */
  readonly runId: string
  readonly principal: string
  /** The arguments the model produced (an approval may have replaced them with `editedArgs`). */
  readonly requestedArgs: unknown
  readonly state: TState
  /** Committed together with the reconciled result. */
  updateState(update: (state: TState) => TState): void
}

export type ReconcileResult =
  { readonly status: 'succeeded'; readonly result: unknown } | { readonly status: 'failed'; readonly result?: unknown }

/** Context for policy hooks (`approval`, `authorize`), before anything runs. */
export type PolicyContext<TState = unknown> = Omit<ToolContext<TState>, 'updateState' | 'interrupt' | 'step'>

/** A function type checked bivariantly, so a tool with specific argument types fits a `ToolDefinition<unknown>` list. */
type Bivariant<TArgs extends unknown[], TResult> = { hook(...args: TArgs): TResult }['hook']

export type ApprovalPolicy<TArgs, TState = unknown> =
  'never' | 'always' | Bivariant<[args: TArgs, ctx: PolicyContext<TState>], boolean | Promise<boolean>>

/**
 * A server tool (docs/architecture.md).
 * @example
 * defineTool({
 *   name: 'deploy', description: 'Deploy a version',
 *   parameters: z.object({ version: z.string(), environment: z.enum(['staging', 'production']) }),
 *   approval: 'always', allowEdits: true,
 *   execute: async (args, ctx) => deployments.start({ ...args, key: ctx.idempotencyKey }),
 * })
 */
export interface ToolDefinition<TArgs = unknown, TState = unknown> {
  readonly name: string
  readonly description: string
  /** JSON Schema or a zod schema of the arguments. */
  readonly parameters: JsonSchema | z.ZodType
  /** Whether a person must approve each call. @default 'never' */
  readonly approval?: ApprovalPolicy<TArgs, TState>
  /** Offer `editedArgs` in the approval schema (a full replacement of the arguments). @default false */
  readonly allowEdits?: boolean
  /**
   * Let the person approve "and remember" (docs/approvals.md#remembered-permissions): the approval
   * schema offers `remember` with these scopes, and an approval with it becomes a rule that approves
   * later matching calls without a pause. Only for approvals of idempotent, low-risk actions.
   */
  readonly remember?: RememberScope | readonly RememberScope[]
  /**
   * The arguments a remembered approval is bound to (each must be equal in a later call for the
   * rule to apply), from the approved arguments. @default any arguments of this tool
   */
  rememberMatch?(args: TArgs): Record<string, unknown>
  /** Let the person approve with a bounded grant for later calls (docs/approvals.md#bounded-grants). */
  readonly grant?: GrantOption<TArgs>
  /** Human-readable text of the approval interrupt. */
  approvalMessage?(args: TArgs): string
  /**
   * Policy check, run when the model calls the tool and again right before execution (the
   * resource may have changed while a person decided). `false` yields a denied result.
   */
  authorize?(args: TArgs, ctx: PolicyContext<TState>): boolean | Promise<boolean>
  /**
   * The stale-approval guard (docs/approvals.md#stale-approvals): a JSON fingerprint of what an approval of this call
   * is about (a version, an ETag, a balance). Taken at the pause and shown as `interrupt.metadata.observed`; taken
   * again after the approval, right before `execute`: when it differs, the call does not run, the decision record
   * says `outcome: "stale"` and the person is asked again (`interlude:stale`, `metadata: { before, after }`). Keep it
   * a cheap read; a throwing `observe` denies the call.
   * @example
   * observe: (args) => ({ running: fleet.running(args.environment) })
   */
  observe?(args: TArgs, ctx: PolicyContext<TState>): unknown
  /**
   * Narrows who may decide this tool's interrupts (docs/approvals.md): only a listed principal (or one the function
   * accepts), and only if the server's `canDecide` allows it too — the owner included.
   */
  readonly approvers?:
    readonly string[] | Bivariant<[principal: string, ctx: DecideContext], boolean | Promise<boolean>>
  /**
   * With `approvers`, the thread's owner (who asked for the call) never decides it — four eyes — unless this is
   * `true`. Wherever the tool runs, a subagent included. @default false
   */
  readonly allowSelfApproval?: boolean
  /** How an organisation decides it: `quorum`, `of`, `notRequester`, `chain`, `escalate`, `remind` (docs/approvals.md#organisation-policies). */
  readonly policy?: DecisionPolicy | Bivariant<[args: TArgs], DecisionPolicy | undefined>
  /** Allows `onExpiry: 'approve'`: the deadline approves the call (only for calls safe to run unattended). */
  readonly allowAutoApprove?: boolean
  /** Checks of this tool's arguments before it is approved or runs (`on: 'args'` only, docs/guardrails.md). */
  readonly guardrails?: readonly GuardrailDefinition<TArgs>[]
  /**
   * Performs the call; the return value (string, or JSON-serialised) is the tool result. For an
   * `external` tool it only starts the operation; its result arrives later by toolCallId.
   */
  execute?(args: TArgs, ctx: ToolContext<TState>): unknown
  /**
   * Settles an unknown effect: called after a restart for a call whose `execute` started but whose
   * outcome was never recorded (the process died in between). Ask the system that owns the effect
   * by `toolCallId` (the idempotency key). Return `{ status: 'succeeded', result }` or
   * `{ status: 'failed', result? }` to settle it, or `undefined` if the outcome is still unknown
   * (it is then reported as an unknown effect). Never re-run the effect here.
   */
  reconcile?(
    toolCallId: string,
    ctx: ReconcileContext<TState>,
  ): ReconcileResult | undefined | Promise<ReconcileResult | undefined>
  /** The result is supplied later by another system as a `tool` message matched by toolCallId. */
  readonly external?: true
  /**
   * Principals besides the thread's owner allowed to post this external tool's result (the system that does the
   * work), through `POST {base}/runs?owner=<owner>` with only `tool` messages (docs/protocol.md#external-results).
   * Only with `external`; an empty list is refused.
   */
  readonly resultFrom?: readonly string[]
  /** Set by `askUser`: the call is answered by a person through an `input_required` interrupt. */
  readonly human?: HumanToolSpec<TArgs>
  /** Set by `defineSubagentTool`: the call runs another agent (docs/approvals.md#subagents). */
  readonly subagent?: SubagentSpec
  /**
   * Seconds a decision on this tool's interrupt may take; a batch expires at the smallest timeout of its
   * interrupts (docs/approvals.md#deadlines). @default the server's `interruptTtlSeconds`
   */
  readonly timeout?: number
  /**
   * What happens when the deadline passes: `deny` (an approval is denied with reason `expired`, the model is told),
   * `cancel` (cancelled; a batch all cancelled ends the turn without a model call) or `keep` (the batch stays open
   * until an all-cancelled resume closes it). @default the server's `onExpiry`, else `deny` for approvals and
   * `cancel` for `askUser`; `approve` (the approval is granted) only with `allowAutoApprove`
   */
  readonly onExpiry?: InterruptExpiryPolicy
}

export interface HumanToolSpec<TArgs> {
  readonly responseSchema: JsonSchema
  message(args: TArgs): string
}

/** Identity helper that infers argument types from a zod `parameters` schema. */
export function defineTool<S extends z.ZodType, TState = unknown>(
  definition: Omit<ToolDefinition<z.infer<S>, TState>, 'parameters'> & { readonly parameters: S },
): ToolDefinition<z.infer<S>, TState>
export function defineTool<TArgs = Record<string, unknown>, TState = unknown>(
  definition: ToolDefinition<TArgs, TState>,
): ToolDefinition<TArgs, TState>
export function defineTool(definition: ToolDefinition): ToolDefinition {
  return definition
}

export type ToolKind = 'server' | 'human' | 'external'

/** A tool after its schemas were normalised and checked at server creation. */
export interface ResolvedTool {
  readonly definition: ToolDefinition
  readonly name: string
  readonly kind: ToolKind
  readonly parameters: JsonSchema
  /** The responseSchema of its approval interrupt (docs/protocol.md). */
  readonly approvalSchema: JsonSchema
  /** `timeout` in ms (docs/approvals.md#deadlines); `undefined`: the server's TTL. */
  readonly timeoutMs: number | undefined
  /** Scopes a person may remember an approval for (empty: no `remember`). */
  readonly rememberScopes: readonly RememberScope[]
  /** What a grant may allow; absent: the tool offers none (docs/approvals.md#bounded-grants). */
  readonly grant?: ResolvedGrant
  /** A subagent tool's agent, resolved with the parent (`resolveAgent`). */
  readonly subagent?: ResolvedAgent
}

function isZodSchema(value: unknown): value is z.ZodType {
  return typeof value === 'object' && value !== null && '_zod' in value
}

/** JSON Schema of a tool's parameters (zod is converted to draft-07). */
export function toJsonSchema(parameters: JsonSchema | z.ZodType): JsonSchema {
  if (isZodSchema(parameters)) {
    const converted = z.toJSONSchema(parameters, { target: 'draft-7' }) as JsonSchema
    const { $schema: _ignored, ...rest } = converted
    return rest
  }
  if (typeof parameters !== 'object' || parameters === null || Array.isArray(parameters)) {
    throw new SchemaDefinitionError('Tool parameters must be a JSON Schema object or a zod schema.')
  }
  return parameters
}

/** Keywords whose value is data, not a schema (a `$ref` string inside is not a reference). */
const DATA_KEYWORDS = new Set(['const', 'enum', 'default', 'examples'])
/** Keywords whose value maps names to schemas (the names are not keywords). */
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', 'definitions', '$defs', 'dependencies'])
/** Where the parameter schema's definitions go: the root of the document that embeds it. */
const DEFINITION_KEYWORDS = ['definitions', '$defs'] as const

/**
 * Local JSON-pointer `$ref`s of a schema that is embedded at `at` inside another document, so they
 * still point where they did: `#` → `at`, `#/x` → `at/x`. Refs into the root `definitions` /
 * `$defs` are kept (those are hoisted to the new root); anchors (`#name`) are left alone.
 */
function rebaseRefs(node: unknown, at: string, hoisted: ReadonlySet<string>): unknown {
  if (Array.isArray(node)) return node.map((item) => rebaseRefs(item, at, hoisted))
  if (typeof node !== 'object' || node === null) return node
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(node as Record<string, unknown>)) {
    if (key === '$ref' && typeof value === 'string') out[key] = rebaseRef(value, at, hoisted)
    else if (DATA_KEYWORDS.has(key)) out[key] = value
    else if (SCHEMA_MAPS.has(key) && typeof value === 'object' && value !== null && !Array.isArray(value)) {
      out[key] = Object.fromEntries(
        Object.entries(value as Record<string, unknown>).map(([name, sub]) => [name, rebaseRefs(sub, at, hoisted)]),
      )
    } else out[key] = rebaseRefs(value, at, hoisted)
  }
  return out
}

function rebaseRef(ref: string, at: string, hoisted: ReadonlySet<string>): string {
  if (ref === '#') return at
  if (!ref.startsWith('#/')) return ref
  const keyword = ref.slice(2).split('/')[0]!
  return hoisted.has(keyword) ? ref : `${at}${ref.slice(1)}`
}

/**
 * `{ approved, editedArgs?, reason? }` with `additionalProperties: false` (docs/protocol.md). With
 * `allowEdits` the parameter schema is embedded as `editedArgs`; its root `definitions` / `$defs`
 * are hoisted to the root of the response schema (under the same keyword) and its other local
 * refs (`#`, `#/properties/…`) are rebased, so every `$ref` resolves against the document it now
 * lives in — for Ajv here and for any client validator.
 */
export function approvalResponseSchema(
  parameters: JsonSchema,
  allowEdits: boolean,
  rememberScopes: readonly RememberScope[] = [],
): JsonSchema {
  const properties: Record<string, unknown> = { approved: { type: 'boolean' } }
  const schema: JsonSchema = { type: 'object', properties, required: ['approved'], additionalProperties: false }
  if (allowEdits) {
    const hoisted = new Set<string>(DEFINITION_KEYWORDS.filter((k) => parameters[k] !== undefined))
    const rebased = rebaseRefs(parameters, '#/properties/editedArgs', hoisted) as JsonSchema
    const editedArgs: JsonSchema = { ...rebased }
    // The response schema's root has no definitions of its own, so hoisting cannot clash.
    for (const keyword of hoisted) {
      const definitions = rebased[keyword]
      if (typeof definitions !== 'object' || definitions === null || Array.isArray(definitions)) {
        throw new SchemaDefinitionError(`The parameter schema's "${keyword}" must be an object.`)
      }
      delete editedArgs[keyword]
      schema[keyword] = definitions
    }
    properties.editedArgs = editedArgs
  }
  properties.reason = { type: 'string', maxLength: 2000 }
  if (rememberScopes.length > 0) {
    properties.remember = {
      type: 'string',
      enum: [...rememberScopes],
      title: 'Remember this approval',
      description: 'Approve later matching calls without asking (revocable).',
    }
  }
  return schema
}

/** The scopes a tool allows `remember` for, checked once at startup. */
function rememberScopesOf(definition: ToolDefinition): readonly RememberScope[] {
  const raw = definition.remember
  if (raw === undefined) return []
  const scopes = (typeof raw === 'string' ? [raw] : [...raw]) as unknown[]
  const bad = scopes.find((s) => !REMEMBER_SCOPES.includes(s as RememberScope))
  if (bad !== undefined || scopes.length === 0)
    throw new RangeError(`Tool "${definition.name}": remember must be "thread", "principal" or a list of them.`)
  if (definition.human) throw new RangeError(`Tool "${definition.name}": a human tool cannot remember answers.`)
  return REMEMBER_SCOPES.filter((s) => scopes.includes(s))
}

function approvalSchemaOf(
  toolName: string,
  parameters: JsonSchema,
  allowEdits: boolean,
  rememberScopes: readonly RememberScope[],
): JsonSchema {
  try {
    return approvalResponseSchema(parameters, allowEdits, rememberScopes)
  } catch (error) {
    if (error instanceof SchemaDefinitionError)
      throw new SchemaDefinitionError(`Tool "${toolName}": ${error.message}`, { cause: error })
    throw error
  }
}

/** `resultFrom` names at least one principal, and only on an external tool (no one else posts a result). */
function resultFromProblemOf(definition: ToolDefinition): string | undefined {
  const listed = definition.resultFrom
  if (listed === undefined) return undefined
  if (!definition.external) return 'resultFrom needs external: true.'
  if (!Array.isArray(listed) || listed.length === 0) return 'resultFrom is empty; name at least one principal.'
  if (listed.some((name) => typeof name !== 'string' || name.length === 0))
    return 'resultFrom must be non-empty strings.'
  return undefined
}

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/

export function resolveTool(definition: ToolDefinition): ResolvedTool {
  if (!TOOL_NAME.test(definition.name)) {
    throw new SchemaDefinitionError(`Tool name "${definition.name}" must match ${TOOL_NAME.source}.`)
  }
  const parameters = toJsonSchema(definition.parameters)
  const remote = remoteRefs(parameters)
  if (remote.length > 0)
    throw new SchemaDefinitionError(`Tool "${definition.name}" uses remote $ref (${remote.join(', ')}).`)
  if (definition.human && definition.external)
    throw new SchemaDefinitionError(`Tool "${definition.name}" cannot be both human and external.`)
  if (!definition.human && !definition.external && typeof definition.execute !== 'function') {
    throw new SchemaDefinitionError(`Tool "${definition.name}" needs execute().`)
  }
  const kind: ToolKind = definition.human ? 'human' : definition.external ? 'external' : 'server'
  const resultFromProblem = resultFromProblemOf(definition)
  if (resultFromProblem !== undefined) throw new RangeError(`Tool "${definition.name}": ${resultFromProblem}`)
  const expiryProblem =
    timeoutProblem(definition.timeout) ??
    (definition.onExpiry === 'approve' ? undefined : expiryOptionProblem(definition.onExpiry)) ??
    decisionPolicyProblem(definition)
  if (expiryProblem !== undefined) throw new RangeError(`Tool "${definition.name}": ${expiryProblem}`)
  const rememberScopes = rememberScopesOf(definition)
  const approvalSchema = approvalSchemaOf(definition.name, parameters, definition.allowEdits === true, rememberScopes)
  const grant = resolveGrant(definition.name, definition.grant, parameters, approvalSchema, kind === 'human')
  return {
    definition,
    name: definition.name,
    kind,
    parameters,
    approvalSchema,
    timeoutMs: definition.timeout === undefined ? undefined : secondsToMs(definition.timeout),
    rememberScopes,
    ...(grant ? { grant } : {}),
  }
}
