import type { DecisionRecord } from '@interlude/protocol'
import type { GrantDecisionRow, GrantTake } from '../grants.ts'
import { toGrantDecision } from '../grants.ts'
import type { Settled } from './group-commit.ts'
import { GroupCommit } from './group-commit.ts'
import type { Queryable } from './query.ts'
import { rows, statement } from './query.ts'

const DECISION_COLUMNS = 'thread_id, tool_call_id, run_id, grant_id, decided_by, decided_at'

/**
 * The take (docs/decisions.md#bounded-grants), one statement: a call that took a grant already gets its record again;
 * otherwise it claims the grant's first free slot that no concurrent take holds (`grant_free_slots`, migration
 * `0019-grant-slot-locks`: `FOR NO KEY UPDATE SKIP LOCKED`, the lock the UPDATE takes), so takes do not queue on one
 * row and a grant of n approves at most n calls across replicas. A take that finds every free slot held by concurrent
 * takes takes nothing (the call pauses). The same statement writes the call's decision record.
 *
 * The slots are locked by a function, not in the statement: a slot that another take updated and committed after this
 * statement began is re-checked (PostgreSQL's EvalPlanQual), and that re-check sets up again every part of the
 * statement it runs in — about 2 ms for this one, the loser's whole cost in a race for a grant's last slots. The
 * function (PL/pgSQL, never inlined; VOLATILE, so its query takes a snapshot of its own) starts later and meets fewer
 * such slots. Every slot it can lock is visible to this statement too — slots are written with their grant and never
 * deleted or inserted again — so the UPDATE finds each row it locked; were that to change, a take would come back
 * empty (its record is written only for a slot the UPDATE took), never approve a call too many.
 */
const TAKE = `
  WITH prior AS (
    SELECT ${DECISION_COLUMNS} FROM grant_decisions WHERE thread_id = $3 AND tool_call_id = $4
  ), live AS (
    SELECT g.grant_id, g.created_by FROM grants g
    WHERE g.grant_id = $1 AND g.owner_id = $2 AND g.revoked_at IS NULL AND (g.until_at IS NULL OR g.until_at > $6)
      AND NOT EXISTS (SELECT 1 FROM prior)
  ), taken AS (
    UPDATE grant_slots SET used_by_call = $4, used_at = $6
    WHERE grant_id = $1 AND slot = (
      SELECT f.slot FROM live CROSS JOIN LATERAL grant_free_slots(ARRAY[live.grant_id], ARRAY[1]) f
    )
    RETURNING grant_id
  ), decision AS (
    INSERT INTO grant_decisions (${DECISION_COLUMNS})
    SELECT $3, $4, $5, live.grant_id, live.created_by, $6 FROM taken JOIN live USING (grant_id)
    RETURNING ${DECISION_COLUMNS}
  )
  SELECT * FROM decision UNION ALL SELECT * FROM prior`

/**
 * Several takes as one statement, each decided as `TAKE` decides it alone. The takes of one grant are numbered in
 * order (`n`); the grant's free slots that no concurrent take holds are locked (`grant_free_slots`), as many as it has
 * takes at most, and numbered by slot; take n gets slot n. Takes left without a slot take nothing. No two takes of one group are of the
 * same call (`GroupCommit`'s key), so a record maps back to its take by (thread, call). Each lookup is a keyed
 * `LATERAL … LIMIT 1`: the plan (generic, cached per connection) stays an index lookup however the tables grow —
 * joined plainly, the planner hash-joins a whole small table, which cost more than the takes themselves. Exported for
 * the bench (bench/approvals/grant-take.ts), which compares it with the slots locked in the statement itself.
 */
export const TAKE_GROUP = `
  WITH req AS (
    SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[])
      WITH ORDINALITY AS r(grant_id, owner_id, thread_id, tool_call_id, run_id, at, ord)
  ), prior AS (
    SELECT r.ord, d.* FROM req r CROSS JOIN LATERAL (
      SELECT ${DECISION_COLUMNS} FROM grant_decisions d
      WHERE d.thread_id = r.thread_id AND d.tool_call_id = r.tool_call_id LIMIT 1
    ) d
  ), wanted AS (
    SELECT r.*, g.created_by, row_number() OVER (PARTITION BY r.grant_id ORDER BY r.ord) AS n
    FROM req r CROSS JOIN LATERAL (
      SELECT g.created_by FROM grants g
      WHERE g.grant_id = r.grant_id AND g.owner_id = r.owner_id AND g.revoked_at IS NULL
        AND (g.until_at IS NULL OR g.until_at > r.at) LIMIT 1
    ) g
    WHERE r.ord NOT IN (SELECT ord FROM prior)
  ), free AS (
    SELECT f.grant_id, f.slot, row_number() OVER (PARTITION BY f.grant_id ORDER BY f.slot) AS n
    FROM (SELECT array_agg(grant_id) AS ids, array_agg(k) AS ks FROM (
      SELECT grant_id, count(*)::int AS k FROM wanted GROUP BY grant_id
    ) c) a CROSS JOIN LATERAL grant_free_slots(a.ids, a.ks) f
  ), taken AS (
    UPDATE grant_slots s SET used_by_call = w.tool_call_id, used_at = w.at
    FROM free f JOIN wanted w ON w.grant_id = f.grant_id AND w.n = f.n
    WHERE s.grant_id = f.grant_id AND s.slot = f.slot
    RETURNING w.ord
  ), decision AS (
    INSERT INTO grant_decisions (${DECISION_COLUMNS})
    SELECT w.thread_id, w.tool_call_id, w.run_id, w.grant_id, w.created_by, w.at FROM taken t JOIN wanted w USING (ord)
    RETURNING ${DECISION_COLUMNS}
  )
  SELECT * FROM decision UNION ALL SELECT ${DECISION_COLUMNS} FROM prior`

/** Grant take statements in flight at once per store (bench/approvals/grant-take.ts). */
export const DEFAULT_TAKE_CONCURRENCY = 2

/** Takes in one statement at most. */
export const MAX_TAKE_GROUP = 64

/**
 * Group commit of grant takes (`group-commit.ts`): the takes one event loop turn releases — a burst of matching calls
 * — go out as one statement and one commit instead of one each, and a burst larger than that waits for a statement in
 * flight and then goes out together. Two takes of one call never share a statement.
 */
export class TakeGroups {
  readonly #q: Queryable
  readonly #groupText: string
  readonly #groups: GroupCommit<GrantTake, DecisionRecord | undefined>

  /**
   * `maxGroup` 1 sends every take alone; `groupText` replaces the group statement (a group of one and the take-by-take
   * retry still use `TAKE`). Both for the bench's comparisons.
   */
  constructor(q: Queryable, concurrency: number, maxGroup = MAX_TAKE_GROUP, groupText = TAKE_GROUP) {
    this.#q = q
    this.#groupText = groupText
    this.#groups = new GroupCommit({
      concurrency,
      maxGroup,
      key: (take) => callKey(take.threadId, take.toolCallId),
      one: (take) => this.#one(take),
      group: (takes) => this.#group(takes),
      gather: true,
      setting: 'takeConcurrency',
    })
  }

  take(request: GrantTake): Promise<DecisionRecord | undefined> {
    return this.#groups.send(request)
  }

  async #one(take: GrantTake): Promise<DecisionRecord | undefined> {
    const { grantId, owner, threadId, toolCallId, runId, now } = take
    const send = () =>
      rows<GrantDecisionRow>(this.#q, statement(TAKE, [grantId, owner, threadId, toolCallId, runId, now]))
    const found = await send().catch((error: unknown) => {
      // Another replica's take of this same call committed its record while ours was under way (ours waited on the
      // record's key, then failed, writing nothing). Sent again, the statement finds that record and answers it.
      const { code, constraint } = error as { code?: string; constraint?: string }
      if (code === '23505' && constraint === 'grant_decisions_pkey') return send()
      throw error
    })
    return found[0] === undefined ? undefined : toGrantDecision(found[0])
  }

  async #group(takes: readonly GrantTake[]): Promise<Settled<DecisionRecord | undefined>[]> {
    const column = <K extends keyof GrantTake>(key: K) => takes.map((take) => take[key])
    const found = await rows<GrantDecisionRow>(
      this.#q,
      statement(this.#groupText, [
        column('grantId'),
        column('owner'),
        column('threadId'),
        column('toolCallId'),
        column('runId'),
        column('now'),
      ]),
    )
    // No two takes of a group are of one call (the key): a record is its call's.
    const byCall = new Map(found.map((row) => [callKey(row.thread_id, row.tool_call_id), toGrantDecision(row)]))
    return takes.map((take) => ({ ok: true, value: byCall.get(callKey(take.threadId, take.toolCallId)) }))
  }
}

const callKey = (threadId: string, toolCallId: string) => `${threadId}\u001f${toolCallId}`
