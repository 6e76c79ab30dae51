import { BUDGET_INTERRUPT_REASON, GUARDRAIL_INTERRUPT_REASON } from '@interlude/protocol'
import type { ResolvedTool } from '../../agent/tool.ts'
import type { DecisionPolicy } from '../../agent/decision-policy.ts'
import { countsVotes, GROUP_PREFIX, policyProblem } from '../../agent/decision-policy.ts'
import { secondsToMs } from '../../agent/expiry-options.ts'
import type { StoredInterrupt } from '../../store/store.ts'
import { allTools, deciderChain } from './decider-chain.ts'

/**
 * A tool's `policy` as the server applies it (docs/approvals.md#organisation-policies): groups expanded to
 * principals, seconds to milliseconds, the top-level `of`/`quorum` as a one-stage chain.
 */

/** Named groups of principals (`createAgentServer({ groups })`, CLI `--group name=a,b`). */
export type PrincipalGroups = Readonly<Record<string, readonly string[]>>

export interface PolicyStage {
  /** Who may vote in this stage; `undefined`: whoever may decide the interrupt. */
  readonly of: ReadonlySet<string> | undefined
  readonly quorum: number
}

export interface VotePolicy {
  /** The stages in order; after an escalation one more: `escalate.to`, one approval. */
  readonly stages: readonly PolicyStage[]
  readonly notRequester: boolean
  /** Whether answers are counted as votes (a quorum, a chain or an escalation). */
  readonly counts: boolean
  readonly escalate?: { readonly afterMs: number; readonly stage: PolicyStage }
  readonly remindBeforeMs?: number
}

/** One answer decides, anybody `canDecide` and the `approvers` allow: no policy. */
export const NO_POLICY: VotePolicy = { stages: [{ of: undefined, quorum: 1 }], notRequester: false, counts: false }

function expand(names: readonly string[], groups: PrincipalGroups, where: string): ReadonlySet<string> {
  const out = new Set<string>()
  for (const name of names) {
    if (!name.startsWith(GROUP_PREFIX)) {
      out.add(name)
      continue
    }
    const members = groups[name.slice(GROUP_PREFIX.length)]
    if (members === undefined) throw new RangeError(`${where}: unknown group "${name}" (define it in groups).`)
    for (const member of members) out.add(member)
  }
  return out
}

/** Resolves one tool's policy; throws `RangeError` naming an unknown group (checked at server creation). */
export function resolvePolicy(tool: string, policy: DecisionPolicy | undefined, groups: PrincipalGroups): VotePolicy {
  if (policy === undefined) return NO_POLICY
  const where = `Tool "${tool}"`
  const stage = (of: readonly string[] | undefined, quorum: number | undefined): PolicyStage => ({
    of: of === undefined ? undefined : expand(of, groups, where),
    quorum: quorum ?? 1,
  })
  const stages = policy.chain ? policy.chain.map((s) => stage(s.of, s.quorum)) : [stage(policy.of, policy.quorum)]
  return {
    stages,
    notRequester: policy.notRequester === true,
    counts: countsVotes(policy),
    ...(policy.escalate
      ? { escalate: { afterMs: secondsToMs(policy.escalate.after), stage: stage(policy.escalate.to, 1) } }
      : {}),
    ...(policy.remind ? { remindBeforeMs: secondsToMs(policy.remind.before) } : {}),
  }
}

/** No principal may decide: a policy from arguments that threw or was invalid (fail closed, and logged). */
const CLOSED: VotePolicy = { stages: [{ of: new Set(), quorum: 1 }], notRequester: true, counts: false }

/** The policy of one stored interrupt. */
export type PolicyOf = (item: Pick<StoredInterrupt, 'toolName' | 'interrupt' | 'kind'>) => VotePolicy

/**
 * The policy of each stored interrupt: of the tools in its decider chain, the innermost that sets one (a subagent's
 * own tool before the subagent tool); guardrail and budget interrupts, and questions, have none. A policy object is
 * resolved once here (an unknown group throws `RangeError` at server creation); a policy from arguments each time,
 * from the arguments the approval shows (`metadata.arguments`).
 */
export function policyResolver(
  tools: ReadonlyMap<string, ResolvedTool>,
  groups: PrincipalGroups,
  logError: (message: string, error: unknown) => void,
): PolicyOf {
  const fixed = new Map<ResolvedTool, VotePolicy>()
  for (const tool of allTools(tools)) {
    const policy = tool.definition.policy
    if (policy !== undefined && typeof policy !== 'function') fixed.set(tool, resolvePolicy(tool.name, policy, groups))
  }
  return (item) => {
    if (item.kind !== 'approval') return NO_POLICY
    const reason = item.interrupt.reason
    if (reason === BUDGET_INTERRUPT_REASON || reason === GUARDRAIL_INTERRUPT_REASON) return NO_POLICY
    const tool = deciderChain(tools, item)
      .reverse()
      .find((t) => t.definition.policy !== undefined)
    const policy = tool?.definition.policy
    if (tool === undefined || policy === undefined) return NO_POLICY
    if (typeof policy !== 'function') return fixed.get(tool) ?? NO_POLICY
    try {
      const made = policy(item.interrupt.metadata?.arguments as never)
      if (made === undefined) return NO_POLICY
      const problem = policyProblem(made)
      if (problem !== undefined) throw new RangeError(problem)
      return resolvePolicy(tool.name, made, groups)
    } catch (error) {
      logError(`policy of tool "${tool.name}" for ${item.interrupt.id} failed`, error)
      return CLOSED
    }
  }
}

/** The stage `index` of a policy: one of its chain, or — past the chain — its escalation's. */
export function stageAt(policy: VotePolicy, index: number): PolicyStage {
  return policy.stages[index] ?? policy.escalate?.stage ?? policy.stages[policy.stages.length - 1]!
}
