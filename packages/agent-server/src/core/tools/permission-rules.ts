import type { PermissionRule, RememberScope, RuleProvenance } from '@interlude/protocol'
import { canonicalJson } from '@interlude/protocol'
import type { ResolvedTool } from '../../agent/tool.ts'
import { argsKey } from '../../store/permission-rules.ts'

/**
 * Remembered permissions (docs/approvals.md#remembered-permissions): which rule an approval with
 * `remember` makes, and whether a rule approves a later call.
 */

/** Every listed argument is equal (canonical JSON); a rule without `argsMatch` matches any arguments. */
export function argsMatch(match: Readonly<Record<string, unknown>> | undefined, args: unknown): boolean {
  if (match === undefined) return true
  if (typeof args !== 'object' || args === null || Array.isArray(args)) return false
  const values = args as Record<string, unknown>
  return Object.entries(match).every(
    ([key, value]) => key in values && canonicalJson(values[key]) === canonicalJson(value),
  )
}

/** The argument key a call of `tool` is looked up by (`rememberMatch` of its arguments, canonical). */
export function callArgsKey(tool: ResolvedTool, args: unknown): string | null {
  const picker = tool.definition.rememberMatch as ((a: unknown) => Record<string, unknown>) | undefined
  return picker ? argsKey(picker(args)) : null
}

/** The call a rule would approve, as its maker's right to decide it is judged (the interrupt it stands for). */
export interface RuleUse {
  readonly tool: ResolvedTool
  readonly args: unknown
  readonly toolCallId: string
  readonly owner: string
  /** The client's thread id. */
  readonly threadId: string
}

/**
 * Whether the principal who made `rule` (or a grant, by its id) could decide this call now
 * (docs/approvals.md#remembered-permissions): a rule or grant is checked at use, so a policy that changed since (new
 * `approvers`, a maker no longer listed) stops it.
 */
export type RuleMakerCheck = (rule: RuleMaker, use: RuleUse) => Promise<boolean>

/** Who made a rule or grant (`ruleId`: the rule's or the grant's id). */
export type RuleMaker = Pick<PermissionRule, 'ruleId' | 'createdBy'>

/** The first of `rules` (oldest first) that approves this call of `tool` and whose maker may still decide it. */
export async function ruleFor(
  use: RuleUse,
  rules: readonly PermissionRule[],
  check: RuleMakerCheck | undefined,
): Promise<PermissionRule | undefined> {
  const { tool, args } = use
  for (const rule of rules) {
    if (rule.toolName !== tool.name || !tool.rememberScopes.includes(rule.scope) || !argsMatch(rule.argsMatch, args))
      continue
    if (check === undefined || (await check(rule, use))) return rule
  }
  return undefined
}

/** The rule an approval with `remember` makes; its id derives from the interrupt, so making it twice is one rule. */
export function ruleFromApproval(input: {
  readonly tool: ResolvedTool
  readonly scope: RememberScope
  readonly args: unknown
  readonly owner: string
  readonly threadId: string
  readonly decidedBy: string
  readonly interruptId: string
  readonly at: number
}): PermissionRule {
  const { tool, scope, args } = input
  const picker = tool.definition.rememberMatch as ((a: unknown) => Record<string, unknown>) | undefined
  const match = picker ? picker(args) : undefined
  return {
    ruleId: `rule_${input.interruptId.replace(/^int_/, '')}`,
    owner: input.owner,
    scope,
    ...(scope === 'thread' ? { threadId: input.threadId } : {}),
    toolName: tool.name,
    ...(match !== undefined ? { argsMatch: match } : {}),
    createdBy: input.decidedBy,
    createdAt: new Date(input.at).toISOString(),
    sourceInterruptId: input.interruptId,
    madeUnder: provenance(tool, input.decidedBy === input.owner ? 'owner' : 'decider'),
  }
}

/** What a rule or grant is made under: the maker's role and the tool's deciders policy at this moment. */
export function provenance(tool: ResolvedTool, role: RuleProvenance['role']): RuleProvenance {
  const { approvers, allowSelfApproval } = tool.definition as {
    readonly approvers?: readonly string[] | ((...args: never[]) => unknown)
    readonly allowSelfApproval?: boolean
  }
  return {
    role,
    ...(approvers === undefined ? {} : { approvers: typeof approvers === 'function' ? 'function' : [...approvers] }),
    ...(allowSelfApproval === undefined ? {} : { allowSelfApproval }),
  }
}
