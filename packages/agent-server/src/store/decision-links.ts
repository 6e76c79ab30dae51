import type { UsedDecisionLink } from './requests.ts'

/** `Store.decisionLinks`: a link's use, written by the claim that spent it (`ClaimBatchRequest.linkId`). */
export interface DecisionLinkStore {
  /** `undefined`: the link was never used. */
  used(linkId: string): Promise<UsedDecisionLink | undefined>
}

/** A `decision_links_used` row as both dialects read it. */
export interface UsedDecisionLinkRow {
  readonly link_id: string
  readonly thread_id: string
  readonly run_id: string
  readonly decided_by: string
  readonly used_at: number | string
}

export function toUsedDecisionLink(row: UsedDecisionLinkRow): UsedDecisionLink {
  return {
    linkId: row.link_id,
    threadId: row.thread_id,
    runId: row.run_id,
    decidedBy: row.decided_by,
    usedAt: Number(row.used_at),
  }
}
