import type { ToolDefinition } from '../agent/tool.ts'

/**
 * The demo's production rule (docs/demo-agent.md, `--production-quorum N`): above 1, a `deploy` to production needs
 * N approvals of the `--approver` principals, never the requester's own; staging (and N = 1) is decided as before by
 * one answer. A policy from the call's arguments (docs/approvals.md#organisation-policies).
 */
export function withProductionQuorum<TArgs extends { readonly environment: string }, TState>(
  deploy: ToolDefinition<TArgs, TState>,
  options: { readonly productionQuorum?: number; readonly approvers?: readonly string[] },
): ToolDefinition<TArgs, TState> {
  const quorum = options.productionQuorum ?? 1
  if (quorum <= 1) return deploy
  const approvers = options.approvers ?? []
  if (approvers.length < quorum)
    throw new RangeError(`--production-quorum ${quorum} needs at least ${quorum} --approver principals.`)
  return {
    ...deploy,
    policy: (args: TArgs) =>
      args.environment === 'production' ? { quorum, of: [...approvers], notRequester: true } : undefined,
  }
}
