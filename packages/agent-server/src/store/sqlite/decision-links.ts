import type Database from 'better-sqlite3'
import type { UsedDecisionLink } from '../store.ts'
import type { UsedDecisionLinkRow } from '../decision-links.ts'
import { toUsedDecisionLink } from '../decision-links.ts'

/**
 * The SQLite statements of decision links (docs/approvals.md#deciding-outside-the-app): a claim that spends a link
 * records it as used in the claim's transaction (`admission.ts`), so a second use is refused whatever process admits it.
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
    /** Inside the claim's transaction: `false` if the link was already used (nothing written). */
    spendTx(link: Omit<UsedDecisionLink, 'usedAt'> & { readonly now: number }): boolean {
      return insert.run(link.linkId, link.threadId, link.runId, link.decidedBy, link.now).changes === 1
    },
  }
}
