import type pg from 'pg'
import type { DecisionRecord, Grant } from '@interlude/protocol'
import type { ClaimBatchRequest, ClaimBatchResult } from '../store.ts'
import type { GrantDecisionRow, GrantListQuery, GrantMatch, GrantRow, GrantStore, GrantTake } from '../grants.ts'
import { activeGrant, GRANT_COLUMNS, grantParams, toGrant, toGrantDecision } from '../grants.ts'
import type { TakeGroups } from './grant-takes.ts'
import { claimWithLinkTx } from './decision-links.ts'
import type { Queryable } from './query.ts'
import { rows, statement } from './query.ts'

const DECISION_COLUMNS = 'thread_id, tool_call_id, run_id, grant_id, decided_by, decided_at'

/** The PostgreSQL side of bounded grants (`../grants.ts`). */
export function postgresGrants(pool: pg.Pool, takes: TakeGroups): GrantStore {
  return {
    async list(owner: string, query: GrantListQuery): Promise<Grant[]> {
      const found = await rows<GrantRow>(
        pool,
        statement(
          `SELECT ${GRANT_COLUMNS} FROM grants g WHERE g.owner_id = $1 AND ${activeGrant('$3')}
             AND ($2::text IS NULL OR g.scope = 'principal' OR g.thread_id = $2)
           ORDER BY g.created_at, g.grant_id`,
          [owner, query.threadId ?? null, query.now],
        ),
      )
      return found.map(toGrant)
    },
    async match(query: GrantMatch): Promise<Grant[]> {
      const found = await rows<GrantRow>(
        pool,
        statement(
          `SELECT ${GRANT_COLUMNS} FROM grants g WHERE g.owner_id = $1 AND g.tool_name = $2 AND ${activeGrant('$4')}
             AND (g.scope = 'principal' OR g.thread_id = $3)
           ORDER BY g.created_at, g.grant_id`,
          [query.owner, query.toolName, query.threadId, query.now],
        ),
      )
      return found.map(toGrant)
    },
    take(request: GrantTake): Promise<DecisionRecord | undefined> {
      // Takes released together go out as one statement (`grant-takes.ts`).
      return takes.take(request)
    },
    async taken(threadId: string, toolCallId: string): Promise<DecisionRecord | undefined> {
      const found = await rows<GrantDecisionRow>(
        pool,
        statement(`SELECT ${DECISION_COLUMNS} FROM grant_decisions WHERE thread_id = $1 AND tool_call_id = $2`, [
          threadId,
          toolCallId,
        ]),
      )
      return found[0] === undefined ? undefined : toGrantDecision(found[0])
    },
    async revoke(owner: string, grantId: string, at: number): Promise<boolean> {
      const result = await pool.query(
        'UPDATE grants SET revoked_at = $3 WHERE grant_id = $2 AND owner_id = $1 AND revoked_at IS NULL',
        [owner, grantId, at],
      )
      return result.rowCount === 1
    },
  }
}

/**
 * A claim that makes grants or spends a decision link, as a transaction of its own (`q` is inside it), never one of a
 * claim group: the claim, then the grants it makes, each with one slot row per call it has left.
 */
export async function claimWithGrantsTx(q: Queryable, request: ClaimBatchRequest): Promise<ClaimBatchResult> {
  // A claim that spends a decision link records the link first (`decision-links.ts`).
  const result = await claimWithLinkTx(q, request)
  if (!result.ok) return result
  for (const grant of request.grants ?? []) {
    const p = grantParams(grant)
    await q.query(
      `WITH made AS (
         INSERT INTO grants (grant_id, owner_id, scope, thread_id, tool_name, match_json, calls, calls_left, until_at,
           created_by, created_at, source_interrupt_id, made_under)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
         ON CONFLICT (grant_id) DO NOTHING
         RETURNING grant_id, calls_left
       )
       INSERT INTO grant_slots (grant_id, slot) SELECT grant_id, generate_series(1, calls_left) FROM made`,
      [
        p.grantId,
        p.owner,
        p.scope,
        p.threadId,
        p.toolName,
        p.matchJson,
        p.calls,
        p.callsLeft,
        p.untilAt,
        p.createdBy,
        p.createdAt,
        p.sourceInterruptId,
        p.madeUnder,
      ],
    )
  }
  return result
}

/** The thread's `via: "grant"` records, oldest first (`listRuleDecisions` adds them to the rules'). */
export async function listGrantDecisions(q: Queryable, threadId: string): Promise<DecisionRecord[]> {
  const { rows: found } = await q.query<GrantDecisionRow>(
    `SELECT ${DECISION_COLUMNS} FROM grant_decisions WHERE thread_id = $1 ORDER BY decided_at, tool_call_id`,
    [threadId],
  )
  return found.map(toGrantDecision)
}
