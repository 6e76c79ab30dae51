import type { DecisionRecord, Grant } from '@interlude/protocol'
import type { CallDecisionRow, StandingRow } from './permission-rules.ts'
import { standingFields, standingParams, toCallDecision } from './permission-rules.ts'

/**
 * Bounded grants in the stores (docs/approvals.md#bounded-grants): the interface both stores implement, the row shapes
 * they share and their mapping. A grant is written by the claim of the approval that made it (`ClaimBatchRequest.grants`,
 * same transaction) with one slot row per call (`grant_slots`, docs/decisions.md#bounded-grants); each later call it
 * approves claims one free slot with one statement that also writes the call's `via: "grant"` decision record. Calls
 * left are the free slots (`grants.calls_left` is not written after the grant is made). Grants are never deleted: a
 * revoked or used-up grant keeps its rows.
 */
export interface GrantStore {
  /**
   * The owner's grants that may still apply at `now` (calls left, not revoked, no `until` at or before `now`), oldest
   * first; `threadId` keeps the principal-wide ones and that thread's.
   */
  list(owner: string, query: GrantListQuery): Promise<Grant[]>
  /** The grants that may approve one call of `toolName` in `threadId` at `now` (the caller still checks `match`). */
  match(query: GrantMatch): Promise<Grant[]>
  /**
   * Takes one call of the grant for `toolCallId`, atomically (claims one free slot, only while the grant is not
   * revoked and not expired at `now`), and writes the call's `via: "grant"` decision record in the same statement. A
   * call that already took a grant gets that record again and takes nothing. `undefined`: nothing left — or, on
   * PostgreSQL, every free slot held by concurrent takes at that moment (the call then pauses: fewer calls, never more).
   */
  take(request: GrantTake): Promise<DecisionRecord | undefined>
  /**
   * The `via: "grant"` record of a call that took a grant (`threadId`: the store's key), whatever the grant's state
   * now (used up, revoked, past `until`); `undefined` when the call took none.
   */
  taken(threadId: string, toolCallId: string): Promise<DecisionRecord | undefined>
  /** Revokes the owner's grant: `false` when there is none with that id (or it is revoked already). */
  revoke(owner: string, grantId: string, at: number): Promise<boolean>
}

export interface GrantListQuery {
  readonly now: number
  /** The client's thread id. */
  readonly threadId?: string
}

export interface GrantMatch {
  readonly owner: string
  /** The client's thread id. */
  readonly threadId: string
  readonly toolName: string
  readonly now: number
}

export interface GrantTake {
  readonly grantId: string
  readonly owner: string
  /** The thread's store key (decision records are the thread's). */
  readonly threadId: string
  readonly toolCallId: string
  readonly runId: string
  readonly now: number
}

export interface GrantRow extends StandingRow {
  readonly grant_id: string
  readonly match_json: string | null
  readonly calls: number | string
  readonly calls_left: number | string
  readonly until_at: number | string | null
}

export interface GrantDecisionRow extends CallDecisionRow {
  readonly grant_id: string
}

/**
 * A grant's columns for `list` and `match` (SQL for both stores, the grant's row is `g`): `calls_left` is its free
 * slots.
 */
export const GRANT_COLUMNS = `g.grant_id, g.owner_id, g.scope, g.thread_id, g.tool_name, g.match_json, g.calls,
  g.until_at, g.created_by, g.created_at, g.source_interrupt_id, g.made_under,
  (SELECT count(*) FROM grant_slots s WHERE s.grant_id = g.grant_id AND s.used_by_call IS NULL) AS calls_left`

/**
 * Grants that may still apply at `now` (an SQL parameter): not revoked, a free slot, no `until` at or before `now`.
 * `g.calls_left > 0` holds for every grant with a free slot; it lets the partial lookup index serve the query.
 */
export const activeGrant = (now: string) => `g.revoked_at IS NULL AND g.calls_left > 0
  AND EXISTS (SELECT 1 FROM grant_slots s WHERE s.grant_id = g.grant_id AND s.used_by_call IS NULL)
  AND (g.until_at IS NULL OR g.until_at > ${now})`

export function toGrant(row: GrantRow): Grant {
  return {
    grantId: row.grant_id,
    ...standingFields(row),
    ...(row.match_json !== null ? { match: JSON.parse(row.match_json) as Record<string, unknown> } : {}),
    calls: Number(row.calls),
    callsLeft: Number(row.calls_left),
    ...(row.until_at !== null ? { until: new Date(Number(row.until_at)).toISOString() } : {}),
  }
}

/** The parameters of an insert, in both stores' named order. */
export function grantParams(grant: Grant) {
  return {
    grantId: grant.grantId,
    ...standingParams(grant),
    matchJson: grant.match === undefined ? null : JSON.stringify(grant.match),
    calls: grant.calls,
    callsLeft: grant.callsLeft,
    untilAt: grant.until === undefined ? null : Date.parse(grant.until),
  }
}

export function toGrantDecision(row: GrantDecisionRow): DecisionRecord {
  return toCallDecision(row, { grantId: row.grant_id })
}
