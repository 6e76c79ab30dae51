import { BUDGET_INTERRUPT_REASON, GUARDRAIL_INTERRUPT_REASON } from '@interlude/protocol'
import type { ResolvedGuardrail } from '../../agent/guardrail.ts'
import type { ResolvedTool, ToolDefinition } from '../../agent/tool.ts'
import type { StoredInterrupt } from '../../store/store.ts'

/**
 * The tools whose deciders govern one stored interrupt (docs/approvals.md#who-may-decide): the tool it is stored
 * under and, for a subagent's interrupt, the subagent's own tool that asked (named by `metadata.toolName`). A
 * principal must satisfy every one of them — the stricter of the parent's and the tool's rules — so a tool's
 * `approvers` hold wherever it runs.
 */
export function deciderChain(
  tools: ReadonlyMap<string, ResolvedTool>,
  item: Pick<StoredInterrupt, 'toolName' | 'interrupt'>,
): ResolvedTool[] {
  const outer = tools.get(item.toolName)
  if (outer === undefined) return []
  const chain = [outer]
  const inner = item.interrupt.metadata?.toolName
  if (outer.subagent !== undefined && item.interrupt.subagentRunId !== undefined && typeof inner === 'string') {
    // Tool names are unique per agent; nested subagents may repeat a name, so every tool of that name counts.
    for (const tool of allTools(outer.subagent.tools)) if (tool.name === inner) chain.push(tool)
  }
  return chain
}

/** Every tool of an agent, its subagents' tools included. */
export function* allTools(tools: ReadonlyMap<string, ResolvedTool>): Generator<ResolvedTool> {
  for (const tool of tools.values()) {
    yield tool
    if (tool.subagent !== undefined) yield* allTools(tool.subagent.tools)
  }
}

/** Who narrows the deciders of one interrupt: a tool's (or a guardrail's) `approvers` and `allowSelfApproval`. */
export interface DeciderPolicy {
  readonly approvers?: ToolDefinition['approvers']
  readonly allowSelfApproval?: boolean
}

/**
 * The policies a principal must satisfy to decide one stored interrupt: a guardrail's interrupt is governed by the
 * guardrail (a compliance group, docs/guardrails.md#who-decides), a budget's by the server's `canDecide` alone, any
 * other by its decider chain of tools.
 */
export function deciderPolicies(
  tools: ReadonlyMap<string, ResolvedTool>,
  guardrails: ReadonlyMap<string, ResolvedGuardrail>,
  item: Pick<StoredInterrupt, 'toolName' | 'interrupt'>,
): readonly DeciderPolicy[] {
  const reason = item.interrupt.reason
  if (reason === BUDGET_INTERRUPT_REASON) return []
  if (reason === GUARDRAIL_INTERRUPT_REASON) {
    const guardrail = guardrails.get(String(item.interrupt.metadata?.guardrail))
    return guardrail ? [guardrail.definition] : []
  }
  return deciderChain(tools, item).map((tool) => tool.definition)
}
