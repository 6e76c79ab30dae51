import type pg from 'pg'
import type { DecisionRecord, Grant } from '@interlude/protocol'
import type { ClaimBatchRequest, ClaimBatchResult } from '../store.ts'
import type { GrantDecisionRow, GrantListQuery, GrantMatch, GrantRow, GrantStore, GrantTake } from '../grants.ts'
import { grantParams, toGrant, toGrantDecision } from '../grants.ts'
import { claimWithLinkTx } from './decision-links.ts'
import type { Queryable } from './query.ts'
import { rows, statement } from './query.ts'

/** Grants that may still apply at `$now` (the parameter number is the caller's). */
const active = (now: string) => `revoked_at IS NULL AND calls_left > 0 AND (until_at IS NULL OR until_at > ${now})`

const DECISION_COLUMNS = 'thread_id, tool_call_id, run_id, grant_id, decided_by, decided_at'

/**
 * The take (docs/approvals.md#bounded-grants), one statement: a call that took a grant already gets its record again;
 * otherwise one conditional update takes a call (concurrent takes queue on the grant's row lock and re-check
 * `calls_left > 0` after the one before them commits, so a grant of n approves at most n calls across replicas) and
 * the same statement writes the call's decision record.
 */
const TAKE = `
  WITH prior AS (
    SELECT ${DECISION_COLUMNS} FROM grant_decisions WHERE thread_id = $3 AND tool_call_id = $4
  ), taken AS (
    UPDATE grants SET calls_left = calls_left - 1
    WHERE grant_id = $1 AND owner_id = $2 AND ${active('$6')} AND NOT EXISTS (SELECT 1 FROM prior)
    RETURNING grant_id, created_by
  ), decision AS (
    INSERT INTO grant_decisions (${DECISION_COLUMNS})
    SELECT $3, $4, $5, grant_id, created_by, $6 FROM taken
    RETURNING ${DECISION_COLUMNS}
  )
  SELECT * FROM decision UNION ALL SELECT * FROM prior`

/** The PostgreSQL side of bounded grants (`../grants.ts`). */
export function postgresGrants(pool: pg.Pool): GrantStore {
  return {
    async list(owner: string, query: GrantListQuery): Promise<Grant[]> {
      const found = await rows<GrantRow>(
        pool,
        statement(
          `SELECT * FROM grants WHERE owner_id = $1 AND ${active('$3')}
             AND ($2::text IS NULL OR scope = 'principal' OR thread_id = $2)
           ORDER BY created_at, grant_id`,
          [owner, query.threadId ?? null, query.now],
        ),
      )
      return found.map(toGrant)
    },
    async match(query: GrantMatch): Promise<Grant[]> {
      const found = await rows<GrantRow>(
        pool,
        statement(
          `SELECT * FROM grants WHERE owner_id = $1 AND tool_name = $2 AND ${active('$4')}
             AND (scope = 'principal' OR thread_id = $3)
           ORDER BY created_at, grant_id`,
          [query.owner, query.toolName, query.threadId, query.now],
        ),
      )
      return found.map(toGrant)
    },
    async take(request: GrantTake): Promise<DecisionRecord | undefined> {
      const { grantId, owner, threadId, toolCallId, runId, now } = request
      const found = await rows<GrantDecisionRow>(
        pool,
        statement(TAKE, [grantId, owner, threadId, toolCallId, runId, now]),
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
 * claim group: the claim, then the grants it makes.
 */
export async function claimWithGrantsTx(q: Queryable, request: ClaimBatchRequest): Promise<ClaimBatchResult> {
  // A claim that spends a decision link records the link first (`decision-links.ts`).
  const result = await claimWithLinkTx(q, request)
  if (!result.ok) return result
  for (const grant of request.grants ?? []) {
    const p = grantParams(grant)
    await q.query(
      `INSERT INTO grants (grant_id, owner_id, scope, thread_id, tool_name, match_json, calls, calls_left, until_at,
         created_by, created_at, source_interrupt_id, made_under)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
       ON CONFLICT (grant_id) DO NOTHING`,
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
