import type { DecisionRecord, Grant } from '@interlude/protocol'
import type { CallDecisionRow, StandingRow } from './permission-rules.ts'
import { standingFields, standingParams, toCallDecision } from './permission-rules.ts'

/**
 * Bounded grants in the stores (docs/approvals.md#bounded-grants): the interface both stores implement, the row shapes
 * they share and their mapping. A grant is written by the claim of the approval that made it (`ClaimBatchRequest.grants`,
 * same transaction); each later call it approves takes one of its calls with one conditional update that also writes
 * the call's `via: "grant"` decision record. Grants are never deleted: a revoked or used-up grant keeps its row.
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
   * Takes one call of the grant for `toolCallId`, atomically (one conditional update: only while it has calls left,
   * is not revoked and not expired at `now`), and writes the call's `via: "grant"` decision record in the same
   * statement. A call that already took a grant gets that record again and takes nothing. `undefined`: nothing left.
   */
  take(request: GrantTake): Promise<DecisionRecord | undefined>
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
