import type { RememberScope, RuleProvenance } from './decisions.ts'

/**
 * Bounded grants (docs/approvals.md#bounded-grants): an approval that also lets a bounded number of later matching
 * calls of the same tool run without a pause — "up to 3 deploys to staging until 18:00". The count is taken
 * atomically in the store, so replicas sharing one database never run more calls than the grant allows.
 */

/** The `grant` of an approval answer (`{ approved: true, grant }`), where the tool offers one. */
export interface GrantRequest {
  /** How many later calls the grant lets run: a positive integer, at most the tool's `grant.maxCalls`. */
  readonly calls: number
  /** RFC 3339, in the future (and within the tool's `grant.maxDuration`); absent: until the calls are used. */
  readonly until?: string
  /** Arguments a later call must have (each equal); only the tool's matchable arguments (`grant.match`). */
  readonly match?: Readonly<Record<string, unknown>>
  /** Later calls in this thread, or in every thread of the thread's owner. */
  readonly scope: RememberScope
}

/** A grant as stored and listed (`GET {base}/grants`). */
export interface Grant {
  readonly grantId: string
  /** The principal whose threads the grant applies to (the thread's owner). */
  readonly owner: string
  readonly scope: RememberScope
  /** Scope `thread` only (the client's thread id). */
  readonly threadId?: string
  readonly toolName: string
  readonly match?: Readonly<Record<string, unknown>>
  /** The calls granted. */
  readonly calls: number
  /** The calls it may still approve. */
  readonly callsLeft: number
  /** RFC 3339; absent: no deadline. */
  readonly until?: string
  /** Who approved with the grant (the owner or a decider). */
  readonly createdBy: string
  /** RFC 3339. */
  readonly createdAt: string
  /** The interrupt whose approval made the grant. */
  readonly sourceInterruptId: string
  /** The maker's role and the tool's deciders policy when the grant was made (as for rules). */
  readonly madeUnder?: RuleProvenance
}

/** `GET {base}/grants`: the grants that may still apply (calls left, not expired, not revoked). */
export interface GrantList {
  readonly items: readonly Grant[]
}
