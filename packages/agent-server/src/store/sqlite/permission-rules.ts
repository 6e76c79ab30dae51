import type Database from 'better-sqlite3'
import type { DecisionRecord, PermissionRule } from '@interlude/protocol'
import type {
  PermissionRuleFilter,
  PermissionRuleMatch,
  PermissionRuleRow,
  RuleDecisionRow,
} from '../permission-rules.ts'
import { ruleParams, toPermissionRule, toRuleDecision } from '../permission-rules.ts'
import type { GrantDecisionRow } from '../grants.ts'
import { toGrantDecision } from '../grants.ts'

/** The SQLite statements of remembered permissions (docs/approvals.md#remembered-permissions). */
export function preparePermissionRules(db: Database.Database) {
  const insert = db.prepare<ReturnType<typeof ruleParams>>(
    `INSERT INTO permission_rules (rule_id, owner_id, scope, thread_id, tool_name, args_match, match_key, created_by,
       created_at, source_interrupt_id, made_under)
     VALUES (@ruleId, @owner, @scope, @threadId, @toolName, @argsMatch, @matchKey, @createdBy, @createdAt,
       @sourceInterruptId, @madeUnder)
     ON CONFLICT (rule_id) DO NOTHING`,
  )
  const list = db.prepare<{ owner: string; threadId: string | null }, PermissionRuleRow>(
    `SELECT * FROM permission_rules
     WHERE owner_id = @owner AND revoked_at IS NULL
       AND (@threadId IS NULL OR scope = 'principal' OR thread_id = @threadId)
     ORDER BY created_at, rule_id`,
  )
  // The hot path: equality on (owner, tool, key) uses the lookup index; no OR on a parameter.
  const match = db.prepare<{ owner: string; threadId: string; toolName: string; argsKey: string }, PermissionRuleRow>(
    `SELECT * FROM permission_rules
     WHERE owner_id = @owner AND tool_name = @toolName AND revoked_at IS NULL
       AND (match_key IS NULL OR match_key = @argsKey)
       AND (scope = 'principal' OR thread_id = @threadId)
     ORDER BY created_at, rule_id`,
  )
  const revoke = db.prepare<{ owner: string; ruleId: string; at: number }>(
    'UPDATE permission_rules SET revoked_at = @at WHERE rule_id = @ruleId AND owner_id = @owner AND revoked_at IS NULL',
  )
  const insertDecision = db.prepare<Omit<RuleDecisionRow, 'decided_at'> & { decided_at: number }>(
    `INSERT INTO rule_decisions (thread_id, tool_call_id, run_id, rule_id, decided_by, decided_at)
     VALUES (@thread_id, @tool_call_id, @run_id, @rule_id, @decided_by, @decided_at)
     ON CONFLICT (thread_id, tool_call_id) DO NOTHING`,
  )
  const listDecisions = db.prepare<[string], RuleDecisionRow>(
    'SELECT * FROM rule_decisions WHERE thread_id = ? ORDER BY decided_at, rowid',
  )
  const listGrantDecisions = db.prepare<[string], GrantDecisionRow>(
    'SELECT * FROM grant_decisions WHERE thread_id = ? ORDER BY decided_at, rowid',
  )
  return {
    add(rule: PermissionRule): void {
      insert.run(ruleParams(rule))
    },
    list(owner: string, filter: PermissionRuleFilter = {}): PermissionRule[] {
      return list.all({ owner, threadId: filter.threadId ?? null }).map(toPermissionRule)
    },
    match(query: PermissionRuleMatch): PermissionRule[] {
      // A NULL key matches only rules without one (`match_key = NULL` is never true).
      return match.all({ ...query, argsKey: query.argsKey ?? '\u0000' }).map(toPermissionRule)
    },
    revoke(owner: string, ruleId: string, at: number): boolean {
      return revoke.run({ owner, ruleId, at }).changes === 1
    },
    addDecision(record: DecisionRecord): void {
      insertDecision.run({
        thread_id: record.threadId,
        tool_call_id: record.toolCallId ?? '',
        run_id: record.runId,
        rule_id: record.ruleId ?? '',
        decided_by: record.decidedBy,
        decided_at: Date.parse(record.at),
      })
    },
    /** The records of the thread's calls a rule or a bounded grant approved (rules first, each oldest first). */
    decisions(threadId: string): DecisionRecord[] {
      return [
        ...listDecisions.all(threadId).map(toRuleDecision),
        ...listGrantDecisions.all(threadId).map(toGrantDecision),
      ]
    },
  }
}
