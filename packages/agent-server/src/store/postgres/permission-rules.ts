import type { DecisionRecord, PermissionRule } from '@interlude/protocol'
import type {
  PermissionRuleFilter,
  PermissionRuleMatch,
  PermissionRuleRow,
  RuleDecisionRow,
} from '../permission-rules.ts'
import { ruleParams, toPermissionRule, toRuleDecision } from '../permission-rules.ts'
import { listGrantDecisions } from './grants.ts'
import type { Queryable } from './query.ts'

/** The PostgreSQL side of remembered permissions (docs/approvals.md#remembered-permissions). */

export async function addPermissionRule(q: Queryable, rule: PermissionRule): Promise<void> {
  const p = ruleParams(rule)
  await q.query(
    `INSERT INTO permission_rules (rule_id, owner_id, scope, thread_id, tool_name, args_match, match_key, created_by,
       created_at, source_interrupt_id, made_under)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
     ON CONFLICT (rule_id) DO NOTHING`,
    [
      p.ruleId,
      p.owner,
      p.scope,
      p.threadId,
      p.toolName,
      p.argsMatch,
      p.matchKey,
      p.createdBy,
      p.createdAt,
      p.sourceInterruptId,
      p.madeUnder,
    ],
  )
}

export async function listPermissionRules(
  q: Queryable,
  owner: string,
  filter: PermissionRuleFilter = {},
): Promise<PermissionRule[]> {
  const { rows } = await q.query<PermissionRuleRow>(
    `SELECT * FROM permission_rules
     WHERE owner_id = $1 AND revoked_at IS NULL
       AND ($2::text IS NULL OR scope = 'principal' OR thread_id = $2)
     ORDER BY created_at, rule_id`,
    [owner, filter.threadId ?? null],
  )
  return rows.map(toPermissionRule)
}

export async function matchPermissionRules(q: Queryable, query: PermissionRuleMatch): Promise<PermissionRule[]> {
  const { rows } = await q.query<PermissionRuleRow>(
    `SELECT * FROM permission_rules
     WHERE owner_id = $1 AND tool_name = $2 AND revoked_at IS NULL
       AND (match_key IS NULL OR match_key = $3)
       AND (scope = 'principal' OR thread_id = $4)
     ORDER BY created_at, rule_id`,
    [query.owner, query.toolName, query.argsKey, query.threadId],
  )
  return rows.map(toPermissionRule)
}

export async function revokePermissionRule(q: Queryable, owner: string, ruleId: string, at: number): Promise<boolean> {
  const result = await q.query(
    'UPDATE permission_rules SET revoked_at = $3 WHERE rule_id = $2 AND owner_id = $1 AND revoked_at IS NULL',
    [owner, ruleId, at],
  )
  return result.rowCount === 1
}

export async function addRuleDecision(q: Queryable, record: DecisionRecord): Promise<void> {
  await q.query(
    `INSERT INTO rule_decisions (thread_id, tool_call_id, run_id, rule_id, decided_by, decided_at)
     VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (thread_id, tool_call_id) DO NOTHING`,
    [
      record.threadId,
      record.toolCallId ?? '',
      record.runId,
      record.ruleId ?? '',
      record.decidedBy,
      Date.parse(record.at),
    ],
  )
}

/** The records of the thread's calls a remembered rule or a bounded grant approved (rules first, each oldest first). */
export async function listRuleDecisions(q: Queryable, threadId: string): Promise<DecisionRecord[]> {
  const [{ rows }, byGrants] = await Promise.all([
    q.query<RuleDecisionRow>('SELECT * FROM rule_decisions WHERE thread_id = $1 ORDER BY decided_at, tool_call_id', [
      threadId,
    ]),
    listGrantDecisions(q, threadId),
  ])
  return [...rows.map(toRuleDecision), ...byGrants]
}
