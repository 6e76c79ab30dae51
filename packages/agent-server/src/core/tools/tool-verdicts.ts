import type { DecisionRecord, PermissionRule, Tool } from '@interlude/protocol'
import type { PolicyContext, ResolvedTool } from '../../agent/tool.ts'
import type { ValidatorCache } from '../../schema/validator-cache.ts'
import type { ToolCallKind, ToolCallStatus } from '../../store/store.ts'
import { parseJson } from '../strict-json.ts'
import type { GuardrailFailure } from '../guardrails/guardrail-checks.ts'

/** What happens to one tool call of a model response, decided before anything is written. */
export type Verdict =
  | { readonly kind: 'reject'; readonly error: string; readonly details?: unknown }
  | { readonly kind: 'deny'; readonly reason: string }
  | { readonly kind: 'client' }
  | { readonly kind: 'interrupt'; readonly tool: ResolvedTool; readonly args: unknown }
  /** A guardrail on the arguments failed and asks a person (docs/guardrails.md). */
  | {
      readonly kind: 'guardrail'
      readonly tool: ResolvedTool
      readonly args: unknown
      readonly failure: GuardrailFailure
    }
  | {
      readonly kind: 'execute' | 'external'
      readonly tool: ResolvedTool
      readonly args: unknown
      /** The remembered permission that approved a call which needed approval. */
      readonly rule?: PermissionRule
      /** The `via: "grant"` record of a call a bounded grant approved (docs/approvals.md#bounded-grants). */
      readonly grant?: DecisionRecord
    }

export interface VerdictContext {
  readonly tools: ReadonlyMap<string, ResolvedTool>
  /** Browser tools the client declared for this run. */
  readonly clientTools: readonly Tool[]
  readonly validators: ValidatorCache
  /** What `authorize` and `approval` see for a call (built when a policy runs). */
  readonly policyContext: (toolCallId: string) => PolicyContext
  readonly logError: (message: string, error: unknown) => void
  /** A remembered permission that approves this call (docs/approvals.md#remembered-permissions). */
  readonly findRule?: (tool: ResolvedTool, args: unknown, toolCallId: string) => Promise<PermissionRule | undefined>
}

/** `undefined` when allowed, else the denial reason. A throwing policy denies (fail closed). */
export async function authorizeCall(
  tool: ResolvedTool,
  args: unknown,
  toolCallId: string,
  ctx: VerdictContext,
): Promise<string | undefined> {
  const authorize = tool.definition.authorize
  if (!authorize) return undefined
  try {
    return (await authorize(args, ctx.policyContext(toolCallId))) === true ? undefined : 'Not authorized by policy.'
  } catch (error) {
    ctx.logError(`authorize of ${tool.name} threw`, error)
    return 'The authorization check failed.'
  }
}

/** Unknown tool, bad arguments, policy denial, a browser call, a decision to ask for, or run it. */
export async function classifyCall(
  call: { readonly id: string; readonly name: string; readonly argsText: string },
  ctx: VerdictContext,
): Promise<Verdict> {
  const tool = ctx.tools.get(call.name)
  if (!tool) {
    if (ctx.clientTools.some((t) => t.name === call.name)) return { kind: 'client' }
    return { kind: 'reject', error: `Unknown tool "${call.name}".` }
  }
  const parsed = parseJson(call.argsText.length === 0 ? '{}' : call.argsText)
  if (!parsed.ok) return { kind: 'reject', error: 'The arguments are not valid JSON.' }
  const valid = ctx.validators.validate(tool.parameters, parsed.value)
  if (!valid.ok) return { kind: 'reject', error: 'The arguments do not match the tool schema.', details: valid.issues }
  const args = parsed.value
  const denial = await authorizeCall(tool, args, call.id, ctx)
  if (denial !== undefined) return { kind: 'deny', reason: denial }
  if (tool.kind === 'human') return { kind: 'interrupt', tool, args }
  const approval = tool.definition.approval ?? 'never'
  let needsApproval: boolean
  if (approval === 'always') needsApproval = true
  else if (approval === 'never') needsApproval = false
  else {
    try {
      needsApproval = (await approval(args, ctx.policyContext(call.id))) === true
    } catch (error) {
      ctx.logError(`approval policy of ${tool.name} threw`, error)
      return { kind: 'deny', reason: 'The approval policy failed.' }
    }
  }
  const kind = tool.kind === 'external' ? 'external' : 'execute'
  if (needsApproval) {
    // Only tools that allow `remember` can be approved by a rule; the lookup is one indexed query.
    const rule = tool.rememberScopes.length > 0 ? await ctx.findRule?.(tool, args, call.id) : undefined
    return rule ? { kind, tool, args, rule } : { kind: 'interrupt', tool, args }
  }
  return { kind, tool, args }
}

/** The verdict of every call, in order; interrupting calls beyond the batch limit get an error result. */
export async function classifyCalls(
  calls: readonly { readonly id: string; readonly name: string; readonly argsText: string }[],
  ctx: VerdictContext,
  maxInterruptsPerBatch: number,
): Promise<Verdict[]> {
  const verdicts: Verdict[] = []
  let interrupting = 0
  for (const call of calls) {
    let verdict = await classifyCall(call, ctx)
    if (verdict.kind === 'interrupt' && ++interrupting > maxInterruptsPerBatch) {
      verdict = {
        kind: 'reject',
        error: `Too many calls need a decision at once (limit ${maxInterruptsPerBatch}). Ask again with fewer.`,
      }
    }
    verdicts.push(verdict)
  }
  return verdicts
}

/** The ledger status a call is recorded with. */
export function recordedStatus(verdict: Verdict): ToolCallStatus {
  return verdict.kind === 'interrupt' || verdict.kind === 'guardrail'
    ? 'awaiting_decision'
    : verdict.kind === 'client'
      ? 'awaiting_result'
      : 'pending'
}

/** The ledger kind of a call: a browser call, or the kind of the agent's tool (`server` when there is none). */
export function recordedKind(verdict: Verdict): ToolCallKind {
  return verdict.kind === 'client' ? 'client' : 'tool' in verdict ? verdict.tool.kind : 'server'
}
