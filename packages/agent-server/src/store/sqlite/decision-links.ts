import type Database from 'better-sqlite3'
import type { ClaimBatchRequest, ClaimBatchResult, UsedDecisionLink } from '../store.ts'
import type { UsedDecisionLinkRow } from '../decision-links.ts'
import { toUsedDecisionLink } from '../decision-links.ts'
import { RollbackWith } from '../rollback-with.ts'
import { claimBatchTx } from './admission.ts'
import type { SqliteStatements } from './statements.ts'

/**
 * The SQLite side of decision links (docs/approvals.md#deciding-outside-the-app): a claim that spends a link records
 * it as used in the claim's transaction, so a second use of the link is refused whatever process admits it.
 */
export function prepareDecisionLinks(db: Database.Database) {
  const insert = db.prepare<[string, string, string, string, number]>(
    `INSERT INTO decision_links_used (link_id, thread_id, run_id, decided_by, used_at) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (link_id) DO NOTHING`,
  )
  const get = db.prepare<[string], UsedDecisionLinkRow>('SELECT * FROM decision_links_used WHERE link_id = ?')
  return {
    async used(linkId: string): Promise<UsedDecisionLink | undefined> {
      const row = get.get(linkId)
      return row ? toUsedDecisionLink(row) : undefined
    },
    /** A claim, inside the store's write transaction; one that spends a link writes both, or neither. */
    claimTx(s: SqliteStatements, request: ClaimBatchRequest): ClaimBatchResult {
      const { linkId, threadId, runId, decidedBy, now } = request
      if (linkId === undefined) return claimBatchTx(s, request)
      if (insert.run(linkId, threadId, runId, decidedBy, now).changes === 0) return { ok: false, reason: 'link_used' }
      const claimed = claimBatchTx(s, request)
      if (!claimed.ok) throw new RollbackWith(claimed)
      return claimed
    },
  }
}
