import type { PermissionRule, RememberScope } from '@interlude/protocol'
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

/** The first of `rules` (oldest first) that approves this call of `tool`. */
export function ruleFor(
  tool: ResolvedTool,
  rules: readonly PermissionRule[],
  args: unknown,
): PermissionRule | undefined {
  return rules.find(
    (r) => r.toolName === tool.name && tool.rememberScopes.includes(r.scope) && argsMatch(r.argsMatch, args),
  )
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
  }
}
