import type { StoredInterrupt } from '../../store/store.ts'
import type { ResolvedGuardrail } from '../../agent/guardrail.ts'
import type { ResolvedTool } from '../../agent/tool.ts'
import type { DecidableBatch, DecisionRights } from './decision-rights.ts'
import { deciderPolicies } from './decider-chain.ts'
import type { BatchTally } from './vote-tally.ts'

export interface LinkDecidersOptions {
  readonly rights: Pick<DecisionRights, 'mayDecide' | 'policyOf'>
  /** The server's `approvers` (CLI `--approver`). */
  readonly approvers: readonly string[]
  readonly tools: ReadonlyMap<string, ResolvedTool>
  readonly guardrails: ReadonlyMap<string, ResolvedGuardrail>
}

/**
 * Who gets decision links for a batch (docs/approvals.md#deciding-outside-the-app): the principals the server can
 * name — the thread's owner, the server's `approvers`, and every principal a tool (or guardrail) of the batch lists in
 * its `approvers` — kept only if they may decide the whole batch now (`DecisionRights.mayDecide`, which also asks a
 * custom `canDecide`). A custom `canDecide` or an `approvers` function cannot be enumerated: a principal only they
 * would admit gets no link, and decides in the app, through the API or in Slack. Under an organisation policy the
 * voters of every stage are candidates too; only those who may vote now (the current stage) get links.
 */
export async function linkDeciders(
  options: LinkDecidersOptions,
  owner: string,
  batch: DecidableBatch,
  tally?: BatchTally,
): Promise<string[]> {
  const candidates = new Set<string>([owner, ...options.approvers])
  for (const item of batch.interrupts as readonly StoredInterrupt[]) {
    for (const policy of deciderPolicies(options.tools, options.guardrails, item)) {
      if (Array.isArray(policy.approvers))
        for (const name of policy.approvers as readonly string[]) candidates.add(name)
    }
    // An organisation policy's voters (docs/approvals.md#organisation-policies), groups expanded: every stage's.
    const votes = options.rights.policyOf(item)
    for (const stage of [...votes.stages, ...(votes.escalate ? [votes.escalate.stage] : [])])
      for (const name of stage.of ?? []) candidates.add(name)
  }
  const deciders: string[] = []
  for (const principal of [...candidates].sort()) {
    if (await options.rights.mayDecide(principal, owner, batch, tally)) deciders.push(principal)
  }
  return deciders
}
