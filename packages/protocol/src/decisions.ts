import type { Interrupt, ResumeEntry, RunFinishedOutcome } from '@ag-ui/core'
import type { OutcomeReason } from './guardrails.ts'

/**
 * Approvals beyond one chat window (docs/approvals.md): who decided a batch, through which
 * channel, and the shapes of the decisions API, the cross-owner inbox and the webhooks.
 */

/**
 * How a decision reached the server: a resume run (`POST /runs`), the decisions API, a deadline, a remembered
 * permission rule (docs/approvals.md#remembered-permissions), a bounded grant, a signed decision link, or Slack
 * (docs/approvals.md#organisations).
 */
export type DecisionVia = 'run' | 'api' | 'expiry' | 'rule' | 'grant' | 'link' | 'slack'

/** Every `DecisionVia`, for the wire schema. */
export const DECISION_VIAS = [
  'run',
  'api',
  'expiry',
  'rule',
  'grant',
  'link',
  'slack',
] as const satisfies readonly DecisionVia[]

/** Where a remembered approval applies: later calls in the same thread, or in every thread of the owner. */
export type RememberScope = 'thread' | 'principal'
export const REMEMBER_SCOPES: readonly RememberScope[] = ['thread', 'principal']

/** `decidedBy` of decisions made by the expiry sweeper. */
export const SYSTEM_EXPIRY_PRINCIPAL = 'system:expiry'

/** `decidedBy` of the record that moves an interrupt's right to decide to the next group (`escalate`). */
export const SYSTEM_ESCALATION_PRINCIPAL = 'system:escalation'

/** What happens to a batch when its `expiresAt` passes. */
export type ExpiryPolicy = 'deny' | 'cancel' | 'keep'

/**
 * What a tool's deadline may do to its approval (docs/approvals.md#organisation-policies): a batch's policy, or
 * `approve` — only for a tool that sets `allowAutoApprove`; it is carried in `interrupt.metadata.onExpiry`.
 */
export type InterruptExpiryPolicy = ExpiryPolicy | 'approve'

/**
 * What became of an admitted decision besides being carried out (docs/approvals.md#stale-approvals): `stale` — an
 * approved call's observation changed while the person decided; the call did not run and was asked again.
 */
export type DecisionOutcome = 'stale'

/** The reason of the interrupt that asks again about a call whose approval went stale. */
export const STALE_INTERRUPT_REASON = 'interlude:stale'

/**
 * `metadata` of an `interlude:stale` interrupt (besides the approval's `toolName`, `arguments`, `allowEdits`): the
 * observation the first approval was given with, the one found before executing, and `observed` (= `after`, what
 * this approval is about).
 */
export interface StaleMetadata {
  readonly before: unknown
  readonly after: unknown
  readonly observed: unknown
}

/**
 * The audit record of one admitted decision. Stored once; only `outcome` and `staleInterruptIds` are added later,
 * once, by the run that carries it out.
 */
export interface DecisionRecord {
  readonly threadId: string
  /** The run that carries the decision out (the resume run). */
  readonly runId: string
  /** The batch decided: the id of the run that paused with it (a fork point, docs/time-travel.md). */
  readonly batchId?: string
  readonly interruptIds: readonly string[]
  readonly entries: readonly ResumeEntry[]
  /** A principal, or `system:expiry`. */
  readonly decidedBy: string
  readonly via: DecisionVia
  /** RFC 3339 (UTC). */
  readonly at: string
  /** `via: "rule"`: the rule that approved the call (no interrupt was opened, so `interruptIds` is empty). */
  readonly ruleId?: string
  /** `via: "grant"`: the bounded grant that approved the call (docs/approvals.md#bounded-grants). */
  readonly grantId?: string
  /** `via: "rule"` or `via: "grant"`: the call the rule or grant approved. */
  readonly toolCallId?: string
  /** Set when an approval of this decision went stale (docs/approvals.md#stale-approvals). */
  readonly outcome?: DecisionOutcome
  /** The approvals that went stale (their calls did not run and were asked again). */
  readonly staleInterruptIds?: readonly string[]
  /**
   * A vote under an organisation policy (docs/approvals.md#organisation-policies): one decider's answer, counted
   * towards a `quorum`. The vote that settles the batch carries the batch's resulting entries and its run.
   */
  readonly vote?: true
  /**
   * The policy stage the record belongs to (0-based, a `chain`'s order): the stage a vote was cast in, or — for a
   * `system:escalation` record — the stage the right to decide moved to.
   */
  readonly stage?: number
}

/** What one interrupt still needs under an organisation policy (docs/approvals.md#organisation-policies). */
export interface VoteTally {
  readonly interruptId: string
  /** The stage that decides it now (0-based). */
  readonly stage: number
  /** Approvals of that stage so far. */
  readonly approvals: number
  /** Approvals that stage needs. */
  readonly quorum: number
}

/**
 * A remembered approval (docs/approvals.md#remembered-permissions): later calls of `toolName` by the
 * owner's agent — in `threadId` (scope `thread`) or in any of the owner's threads (scope `principal`)
 * — whose arguments match `argsMatch` (every listed argument equal; absent: any arguments) run
 * without a pause. Made when a person approves with `remember`; revoked through the API.
 */
export interface PermissionRule {
  readonly ruleId: string
  /** The principal whose threads the rule applies to (the thread's owner). */
  readonly owner: string
  readonly scope: RememberScope
  /** Scope `thread` only. */
  readonly threadId?: string
  readonly toolName: string
  readonly argsMatch?: Readonly<Record<string, unknown>>
  /** Who approved with `remember` (the owner or a decider). */
  readonly createdBy: string
  /** RFC 3339. */
  readonly createdAt: string
  /** The interrupt whose approval made the rule. */
  readonly sourceInterruptId: string
  /**
   * What the rule was made under: the maker's relation to the thread and the tool's `approvers` at that moment (a list,
   * or `"function"` for a custom check). A rule still applies only while its maker could decide the call now
   * (docs/approvals.md#who-may-what); this says what the policy was when it was made. Absent on rules made before it
   * was recorded.
   */
  readonly madeUnder?: RuleProvenance
}

/** `PermissionRule.madeUnder`. */
export interface RuleProvenance {
  /** `owner`: the thread's owner approved with `remember`; `decider`: another principal with the right to decide. */
  readonly role: 'owner' | 'decider'
  /** The tool's `approvers` when the rule was made: absent when it had none. */
  readonly approvers?: readonly string[] | 'function'
  /** The tool's `allowSelfApproval` when the rule was made, when set. */
  readonly allowSelfApproval?: boolean
}

/** `GET {base}/permission-rules`. */
export interface PermissionRuleList {
  readonly items: readonly PermissionRule[]
}

/** `CUSTOM { name, value: DecisionRecord }`, emitted right after the resumed run's `RUN_STARTED`. */
export const DECISION_EVENT_NAME = 'interlude.decision'

/** Body of `POST {base}/threads/:threadId/decisions`. `runId` is the idempotency key. */
export interface DecisionRequest {
  readonly runId: string
  readonly resume: readonly ResumeEntry[]
}

/** `202` answer of `POST {base}/threads/:threadId/decisions`. */
export interface DecisionAccepted {
  readonly threadId: string
  readonly runId: string
  /**
   * Set when the answer was a vote that did not settle the batch (docs/approvals.md#organisation-policies): what every
   * still open interrupt needs. Nothing runs yet; `runId` names the vote, not a run. Also the `202` answer of such a
   * vote sent as a resume run (`POST {base}/runs`).
   */
  readonly pending?: readonly VoteTally[]
}

export type RunViewStatus = 'running' | 'finished' | 'failed' | 'cancelled' | 'interrupted'

/** `GET {base}/threads/:threadId/runs/:runId`. */
export interface RunView {
  readonly threadId: string
  readonly runId: string
  readonly status: RunViewStatus
  /** How it ended, with why when it says more than the type (docs/guardrails.md#outcome-reasons). */
  readonly outcome?: RunFinishedOutcome & { readonly reason?: OutcomeReason }
  /** The stream error code of a failed run. */
  readonly errorCode?: string
  /** The decision this run carries out (resume runs). */
  readonly decision?: DecisionRecord
  /** The batch this run paused with (its own id) or, for a resume run, the batch it carries out (docs/time-travel.md). */
  readonly batchId?: string
  /** Tokens the run's model calls used so far, when the provider reports usage (docs/protocol.md#token-usage). */
  readonly usage?: RunUsage
}

/** Token counts of a run's model calls (summed over its calls). */
export interface RunUsage {
  readonly inputTokens: number
  readonly outputTokens: number
  readonly totalTokens: number
}

/** One open batch in `GET {base}/interrupts?status=pending`. */
export interface PendingBatch {
  readonly threadId: string
  /** The id of the run that paused with the batch (a fork point, docs/time-travel.md). */
  readonly batchId?: string
  readonly owner: string
  readonly title?: string
  /** RFC 3339. */
  readonly openedAt: string
  /** RFC 3339; in the past only for a `keep` batch waiting to be closed. */
  readonly expiresAt: string
  readonly onExpiry: ExpiryPolicy
  readonly interrupts: readonly Interrupt[]
  /**
   * Under an organisation policy that counts votes (docs/approvals.md#organisation-policies): what each still open
   * interrupt needs now, its stage and the approvals so far. Absent when one answer decides the batch.
   */
  readonly votes?: readonly VoteTally[]
}

export interface PendingBatchPage {
  readonly items: readonly PendingBatch[]
  /** Opaque cursor for the next page, absent on the last page. */
  readonly nextCursor?: string
}

export const WEBHOOK_EVENT_TYPES = [
  'interrupt.opened',
  'interrupt.decided',
  'interrupt.expired',
  'interrupt.escalated',
  'interrupt.reminder',
  'run.failed',
] as const
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number]

/** The body of every webhook delivery (signed per the Standard Webhooks spec). */
export interface WebhookPayload {
  readonly type: WebhookEventType
  /** RFC 3339. */
  readonly timestamp: string
  readonly data: {
    readonly threadId: string
    readonly owner: string
    readonly runId?: string
    readonly interrupts?: readonly Interrupt[]
    readonly decision?: DecisionRecord
    readonly errorCode?: string
    /** `interrupt.opened` with a public URL: one signed, single-use link per decider and action. */
    readonly links?: readonly DecisionLink[]
  }
}

/**
 * A signed decision link (docs/approvals.md#deciding-outside-the-app): `GET url` shows a confirmation page, its form
 * `POST`s the decision. Bound to one decider, one action and the batch of `interruptId`; used once; valid until
 * `expiresAt` (never after the batch's own deadline).
 */
export interface DecisionLink {
  /** The principal the link decides as. */
  readonly decider: string
  readonly action: DecisionLinkAction
  /** The batch's interrupt the link names (it decides the whole batch the same way). */
  readonly interruptId: string
  readonly url: string
  /** RFC 3339. */
  readonly expiresAt: string
}

/** What a decision link or a Slack button answers: every interrupt of the batch approved, or every one denied. */
export type DecisionLinkAction = 'approve' | 'deny'
