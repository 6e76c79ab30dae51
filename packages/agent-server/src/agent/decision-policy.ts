import type { InterruptExpiryPolicy } from '@interlude/protocol'
import { MAX_TIMEOUT_SECONDS } from './expiry-options.ts'

/**
 * How an organisation decides a tool's approval (docs/approvals.md#organisation-policies). Every field is optional;
 * a policy with none of `quorum`, `chain`, `escalate` is decided by one answer, as without a policy.
 * @example
 * policy: { quorum: 2, of: ['group:sre'], notRequester: true, escalate: { after: 3600, to: ['group:leads'] } }
 */
export interface DecisionPolicy {
  /** Approvals needed (each from another decider). Any denial denies. @default 1 */
  readonly quorum?: number
  /** Who may vote: principals, or `group:<name>` for a group of the server (`createAgentServer({ groups })`). */
  readonly of?: readonly string[]
  /** The thread's owner (who asked for the call) may not vote, even where `canDecide` or `of` would let it. */
  readonly notRequester?: boolean
  /**
   * Ordered stages, each with its own `of` and `quorum`: a later stage's deciders see nothing of the interrupt until
   * every earlier stage approved. Replaces the top-level `of`/`quorum`.
   */
  readonly chain?: readonly DecisionStage[]
  /**
   * When the interrupt is not settled `after` seconds after it opened, the right to decide moves to `to` (one
   * approval of theirs settles it; votes before count no more): a `system:escalation` record and the
   * `interrupt.escalated` webhook. Earlier deciders then get `404`.
   */
  readonly escalate?: { readonly after: number; readonly to: readonly string[] }
  /** An `interrupt.reminder` webhook `before` seconds before the batch's deadline (once). */
  readonly remind?: { readonly before: number }
}

export interface DecisionStage {
  readonly of?: readonly string[]
  /** @default 1 */
  readonly quorum?: number
}

/**
 * A tool's `policy`: one for every call, or one per call from its arguments (the arguments the approval shows;
 * `undefined`: one answer decides, as without a policy).
 */
export type ToolDecisionPolicy = DecisionPolicy | { bivariant(args: never): DecisionPolicy | undefined }['bivariant']

/** What `resolveTool` checks of a tool's policy fields. */
export interface PolicyFields {
  readonly policy?: ToolDecisionPolicy
  readonly allowAutoApprove?: boolean
  readonly onExpiry?: InterruptExpiryPolicy
}

/** The prefix that names a server group in `of` and `escalate.to`. */
export const GROUP_PREFIX = 'group:'

const isPositiveInt = (value: unknown) => typeof value === 'number' && Number.isInteger(value) && value >= 1
const isSeconds = (value: unknown) =>
  typeof value === 'number' && Number.isFinite(value) && value > 0 && value <= MAX_TIMEOUT_SECONDS

function namesProblem(names: unknown, where: string): string | undefined {
  if (names === undefined) return undefined
  if (!Array.isArray(names) || names.length === 0) return `${where} is empty; name at least one principal or group.`
  if (names.some((n) => typeof n !== 'string' || n.length === 0 || n === GROUP_PREFIX))
    return `${where} must be non-empty principal names or group:<name>.`
  return undefined
}

function stageProblem(stage: DecisionStage | undefined, where: string): string | undefined {
  if (stage === undefined || typeof stage !== 'object') return `${where} must be an object.`
  if (stage.quorum !== undefined && !isPositiveInt(stage.quorum)) return `${where}.quorum must be an integer ≥ 1.`
  return namesProblem(stage.of, `${where}.of`)
}

/** Whether a policy needs votes counted: more than one approval, stages, or an escalation. */
export function countsVotes(policy: DecisionPolicy | undefined): boolean {
  if (policy === undefined) return false
  return (policy.quorum ?? 1) > 1 || policy.chain !== undefined || policy.escalate !== undefined
}

/**
 * Why a tool's policy fields are invalid (checked when the server is created, and for a policy from arguments each
 * time it is made); `undefined`: valid.
 */
export function decisionPolicyProblem(fields: PolicyFields): string | undefined {
  if (fields.onExpiry === 'approve' && fields.allowAutoApprove !== true)
    return "onExpiry: 'approve' needs allowAutoApprove: true (a deadline would approve the call)."
  const policy = fields.policy
  if (policy === undefined || typeof policy === 'function') return undefined
  return policyProblem(policy)
}

/** Why a policy is invalid; `undefined`: valid. */
export function policyProblem(policy: DecisionPolicy): string | undefined {
  if (typeof policy !== 'object' || policy === null) return 'policy must be an object.'
  return (
    (policy.quorum !== undefined && !isPositiveInt(policy.quorum)
      ? 'policy.quorum must be an integer ≥ 1.'
      : undefined) ??
    namesProblem(policy.of, 'policy.of') ??
    (policy.chain !== undefined && (policy.of !== undefined || policy.quorum !== undefined)
      ? 'policy.chain replaces policy.of and policy.quorum; give each stage its own.'
      : undefined) ??
    (policy.chain !== undefined && (!Array.isArray(policy.chain) || policy.chain.length === 0)
      ? 'policy.chain is empty.'
      : undefined) ??
    policy.chain?.map((stage, i) => stageProblem(stage, `policy.chain[${i}]`)).find((p) => p !== undefined) ??
    (policy.escalate !== undefined && !isSeconds(policy.escalate.after)
      ? 'policy.escalate.after must be a positive number of seconds.'
      : undefined) ??
    (policy.escalate !== undefined ? namesProblem(policy.escalate.to ?? [], 'policy.escalate.to') : undefined) ??
    (policy.remind !== undefined && !isSeconds(policy.remind.before)
      ? 'policy.remind.before must be a positive number of seconds.'
      : undefined)
  )
}
