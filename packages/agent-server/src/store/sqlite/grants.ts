import type Database from 'better-sqlite3'
import type { DecisionRecord, Grant } from '@interlude/protocol'
import type { GrantDecisionRow, GrantListQuery, GrantMatch, GrantRow, GrantStore, GrantTake } from '../grants.ts'
import { activeGrant, GRANT_COLUMNS, grantParams, toGrant, toGrantDecision } from '../grants.ts'
import { writeTransaction } from './write-transaction.ts'

/**
 * The SQLite side of bounded grants (`../grants.ts`). Writers are serialised by `BEGIN IMMEDIATE`, so the take (the
 * grant's first free slot, in the write transaction) decides across processes sharing the file too.
 */
export function sqliteGrants(db: Database.Database) {
  const insert = db.prepare<ReturnType<typeof grantParams>>(
    `INSERT INTO grants (grant_id, owner_id, scope, thread_id, tool_name, match_json, calls, calls_left, until_at,
       created_by, created_at, source_interrupt_id, made_under)
     VALUES (@grantId, @owner, @scope, @threadId, @toolName, @matchJson, @calls, @callsLeft, @untilAt, @createdBy,
       @createdAt, @sourceInterruptId, @madeUnder)
     ON CONFLICT (grant_id) DO NOTHING`,
  )
  const insertSlot = db.prepare<{ grantId: string; slot: number }>(
    'INSERT INTO grant_slots (grant_id, slot) VALUES (@grantId, @slot)',
  )
  const list = db.prepare<{ owner: string; threadId: string | null; now: number }, GrantRow>(
    `SELECT ${GRANT_COLUMNS} FROM grants g WHERE g.owner_id = @owner AND ${activeGrant('@now')}
       AND (@threadId IS NULL OR g.scope = 'principal' OR g.thread_id = @threadId)
     ORDER BY g.created_at, g.grant_id`,
  )
  const match = db.prepare<GrantMatch, GrantRow>(
    `SELECT ${GRANT_COLUMNS} FROM grants g WHERE g.owner_id = @owner AND g.tool_name = @toolName
       AND ${activeGrant('@now')} AND (g.scope = 'principal' OR g.thread_id = @threadId)
     ORDER BY g.created_at, g.grant_id`,
  )
  const prior = db.prepare<{ threadId: string; toolCallId: string }, GrantDecisionRow>(
    'SELECT * FROM grant_decisions WHERE thread_id = @threadId AND tool_call_id = @toolCallId',
  )
  const live = db.prepare<GrantTake, { created_by: string }>(
    `SELECT created_by FROM grants WHERE grant_id = @grantId AND owner_id = @owner AND revoked_at IS NULL
       AND (until_at IS NULL OR until_at > @now)`,
  )
  // The take: the grant's first free slot, so a grant of n approves at most n calls whoever asks.
  const takeSlot = db.prepare<GrantTake>(
    `UPDATE grant_slots SET used_by_call = @toolCallId, used_at = @now
     WHERE grant_id = @grantId
       AND slot = (SELECT min(slot) FROM grant_slots WHERE grant_id = @grantId AND used_by_call IS NULL)`,
  )
  const insertDecision = db.prepare<GrantDecisionRow>(
    `INSERT INTO grant_decisions (thread_id, tool_call_id, run_id, grant_id, decided_by, decided_at)
     VALUES (@thread_id, @tool_call_id, @run_id, @grant_id, @decided_by, @decided_at)`,
  )
  const revoke = db.prepare<{ owner: string; grantId: string; at: number }>(
    'UPDATE grants SET revoked_at = @at WHERE grant_id = @grantId AND owner_id = @owner AND revoked_at IS NULL',
  )
  const takeTx = (request: GrantTake): DecisionRecord | undefined => {
    const taken = prior.get(request)
    if (taken) return toGrantDecision(taken)
    const grant = live.get(request)
    if (!grant || takeSlot.run(request).changes !== 1) return undefined
    const row: GrantDecisionRow = {
      thread_id: request.threadId,
      tool_call_id: request.toolCallId,
      run_id: request.runId,
      grant_id: request.grantId,
      decided_by: grant.created_by,
      decided_at: request.now,
    }
    insertDecision.run(row)
    return toGrantDecision(row)
  }
  const store: GrantStore = {
    list: async (owner: string, query: GrantListQuery) =>
      list.all({ owner, threadId: query.threadId ?? null, now: query.now }).map(toGrant),
    match: async (query: GrantMatch) => match.all(query).map(toGrant),
    take: async (request: GrantTake) => writeTransaction(db, () => takeTx(request)),
    taken: async (threadId: string, toolCallId: string) => {
      const row = prior.get({ threadId, toolCallId })
      return row === undefined ? undefined : toGrantDecision(row)
    },
    revoke: async (owner: string, grantId: string, at: number) =>
      writeTransaction(db, () => revoke.run({ owner, grantId, at }).changes === 1),
  }
  return {
    ...store,
    /** Inside the claim's transaction (`admission.ts`): the grants the decision makes, a slot per call left. */
    insertTx(grants: readonly Grant[] | undefined): void {
      for (const grant of grants ?? []) {
        if (insert.run(grantParams(grant)).changes !== 1) continue
        for (let slot = 1; slot <= grant.callsLeft; slot++) insertSlot.run({ grantId: grant.grantId, slot })
      }
    },
  }
}
