import type { DecisionRecord, PermissionRule, RememberScope, RuleProvenance } from '@interlude/protocol'
import { canonicalJson } from '@interlude/protocol'

/**
 * Remembered permissions in the stores (docs/approvals.md#remembered-permissions): the row shapes
 * both stores share and their mapping. Rules are never deleted: a revoked rule keeps its row (an
 * audit trail of what approved what), with `revoked_at` set.
 */

export interface PermissionRuleFilter {
  /** Principal-scoped rules plus the thread-scoped rules of this thread (else every rule of the owner). */
  readonly threadId?: string
}

/**
 * The hot lookup of a tool call (one indexed query): the owner's active rules for `toolName` that
 * apply in `threadId` and whose argument key is `argsKey` or absent (a rule for any arguments).
 */
export interface PermissionRuleMatch {
  readonly owner: string
  readonly threadId: string
  readonly toolName: string
  /** `argsKey(rememberMatch(args))` of the call, or null when the tool binds rules to no arguments. */
  readonly argsKey: string | null
}

/** The indexed key of a rule's argument match: canonical JSON, so equal values give equal keys. */
export function argsKey(match: Readonly<Record<string, unknown>> | undefined): string | null {
  return match === undefined ? null : canonicalJson(match)
}

export interface PermissionRuleRow {
  readonly rule_id: string
  readonly owner_id: string
  readonly scope: RememberScope
  readonly thread_id: string | null
  readonly tool_name: string
  readonly args_match: string | null
  readonly created_by: string
  readonly created_at: number | string
  readonly source_interrupt_id: string
  /** JSON of `PermissionRule.madeUnder` (null on rules made before it was recorded). */
  readonly made_under?: string | null
}

export interface RuleDecisionRow {
  readonly thread_id: string
  readonly tool_call_id: string
  readonly run_id: string
  readonly rule_id: string
  readonly decided_by: string
  readonly decided_at: number | string
}

/** The columns a rule and a grant share (`grants.ts`). */
export type StandingRow = Pick<
  PermissionRuleRow,
  'owner_id' | 'scope' | 'thread_id' | 'tool_name' | 'created_by' | 'created_at' | 'source_interrupt_id' | 'made_under'
>

/** Who a standing permission (a rule or a grant) is for and who made it, from its row. */
export function standingFields(row: StandingRow) {
  return {
    owner: row.owner_id,
    scope: row.scope,
    ...(row.thread_id !== null ? { threadId: row.thread_id } : {}),
    toolName: row.tool_name,
    createdBy: row.created_by,
    createdAt: new Date(Number(row.created_at)).toISOString(),
    sourceInterruptId: row.source_interrupt_id,
    ...(row.made_under ? { madeUnder: JSON.parse(row.made_under) as RuleProvenance } : {}),
  }
}

/** The same fields as insert parameters (both stores' named order). */
export function standingParams(item: Omit<PermissionRule, 'ruleId' | 'argsMatch'>) {
  return {
    owner: item.owner,
    scope: item.scope,
    threadId: item.scope === 'thread' ? (item.threadId ?? null) : null,
    toolName: item.toolName,
    createdBy: item.createdBy,
    createdAt: Date.parse(item.createdAt),
    sourceInterruptId: item.sourceInterruptId,
    madeUnder: item.madeUnder === undefined ? null : JSON.stringify(item.madeUnder),
  }
}

export function toPermissionRule(row: PermissionRuleRow): PermissionRule {
  return {
    ruleId: row.rule_id,
    ...standingFields(row),
    ...(row.args_match !== null ? { argsMatch: JSON.parse(row.args_match) as Record<string, unknown> } : {}),
  }
}

/** The parameters of an insert, in both stores' named order. */
export function ruleParams(rule: PermissionRule) {
  return {
    ruleId: rule.ruleId,
    ...standingParams(rule),
    argsMatch: rule.argsMatch === undefined ? null : JSON.stringify(rule.argsMatch),
    matchKey: argsKey(rule.argsMatch),
  }
}

/** The columns of a call's record that a rule or a grant approved (`rule_decisions`, `grant_decisions`). */
export type CallDecisionRow = Omit<RuleDecisionRow, 'rule_id'>

/** The record of one call a rule (`{ ruleId }`) or a grant (`{ grantId }`) approved. */
export function toCallDecision(
  row: CallDecisionRow,
  by: { readonly ruleId: string } | { readonly grantId: string },
): DecisionRecord {
  return {
    threadId: row.thread_id,
    runId: row.run_id,
    interruptIds: [],
    entries: [],
    decidedBy: row.decided_by,
    via: 'ruleId' in by ? 'rule' : 'grant',
    at: new Date(Number(row.decided_at)).toISOString(),
    ...by,
    toolCallId: row.tool_call_id,
  }
}

export function toRuleDecision(row: RuleDecisionRow): DecisionRecord {
  return toCallDecision(row, { ruleId: row.rule_id })
}

/** Decision records of both kinds in one list, oldest first (a stable merge: ties keep batch records first). */
export function mergeDecisions(batch: DecisionRecord[], rules: DecisionRecord[]): DecisionRecord[] {
  if (rules.length === 0) return batch
  return [...batch, ...rules].sort((a, b) => Date.parse(a.at) - Date.parse(b.at))
}
