import type { ClaimBatchRequest, ClaimBatchResult, UsedDecisionLink } from '../store.ts'
import type { DecisionLinkStore, UsedDecisionLinkRow } from '../decision-links.ts'
import { toUsedDecisionLink } from '../decision-links.ts'
import { RollbackWith } from '../rollback-with.ts'
import { claimBatch } from './admission.ts'
import type { Queryable } from './query.ts'
import { rows, statement } from './query.ts'

const INSERT_USED = `INSERT INTO decision_links_used (link_id, thread_id, run_id, decided_by, used_at)
  VALUES ($1, $2, $3, $4, $5) ON CONFLICT (link_id) DO NOTHING`
const GET_USED = 'SELECT * FROM decision_links_used WHERE link_id = $1'

/**
 * The PostgreSQL side of decision links (docs/approvals.md#deciding-outside-the-app): the link's row first (its primary
 * key decides between two replicas spending the same link), then the claim (or a vote's write, `votes.ts`), in one
 * transaction; a refused claim rolls the link's row back.
 */
export async function claimWithLinkTx(
  q: Queryable,
  request: ClaimBatchRequest,
  claim: (q: Queryable, request: ClaimBatchRequest) => Promise<ClaimBatchResult> = claimBatch,
): Promise<ClaimBatchResult> {
  const { linkId, threadId, runId, decidedBy, now } = request
  if (linkId === undefined) return claim(q, request)
  const inserted = await q.query(statement(INSERT_USED, [linkId, threadId, runId, decidedBy, now]))
  if (inserted.rowCount === 0) return { ok: false, reason: 'link_used' }
  const claimed = await claim(q, request)
  if (!claimed.ok) throw new RollbackWith(claimed)
  return claimed
}

/** `Store.decisionLinks` on the pool. */
export function postgresDecisionLinks(q: Queryable): DecisionLinkStore {
  return {
    async used(linkId: string): Promise<UsedDecisionLink | undefined> {
      const found = await rows(q, statement<UsedDecisionLinkRow & Record<string, unknown>>(GET_USED, [linkId]))
      return found[0] ? toUsedDecisionLink(found[0]) : undefined
    },
  }
}
