import type { z } from 'zod'
import type { ExpiryPolicy } from '@interlude/protocol'
import type { AgentDefinition } from './agent.ts'
import type { DecideContext } from './decider.ts'
import type { JsonSchema, PolicyContext, ToolDefinition } from './tool.ts'

/** What a subagent tool runs: the agent, its first message from the call's arguments, the parent's result. */
export interface SubagentSpec<TArgs = unknown> {
  readonly agent: AgentDefinition
  input(args: TArgs): string
  result?(answer: string): unknown
}

export interface SubagentToolOptions<TArgs> {
  /** The tool's name in the parent, also the subagent's name in its events and interrupts. */
  readonly name: string
  readonly description: string
  readonly parameters: JsonSchema | z.ZodType
  /** The subagent: its own model, system prompt, tools (with their approvals) and `maxIterations`. */
  readonly agent: AgentDefinition
  /** The subagent's first user message, from the call's arguments. */
  input(args: TArgs): string
  /** The parent's tool result from the subagent's final answer. @default the answer text */
  result?(answer: string): unknown
  /** Whether the parent's call itself needs approval (before the subagent starts). @default 'never' */
  readonly approval?: ToolDefinition<TArgs>['approval']
  authorize?(args: TArgs, ctx: PolicyContext): boolean | Promise<boolean>
  /** Who may decide the subagent's interrupts (they are routed through this tool). */
  readonly approvers?: readonly string[] | ((principal: string, ctx: DecideContext) => boolean | Promise<boolean>)
  /** With `approvers`, whether the thread's owner may decide its own call (four eyes by default). */
  readonly allowSelfApproval?: boolean
  /** Seconds a decision on the subagent's interrupts may take. @default the server's `interruptTtlSeconds` */
  readonly timeout?: number
  readonly onExpiry?: ExpiryPolicy
}

/**
 * An agent as a tool of another agent (docs/approvals.md#subagents). The subagent runs its own model/tool loop when
 * the parent's model calls this tool; its approvals and questions pause the parent's turn (they carry
 * `subagentRunId` and `metadata.subagent`), its events appear in the parent's stream as `CUSTOM interlude.subagent`,
 * and its messages stay private: the parent gets the final answer as the tool result.
 * @example
 * defineSubagentTool({
 *   name: 'auditor', description: 'Audits the release and signs it off.',
 *   parameters: { type: 'object', properties: { version: { type: 'string' } }, required: ['version'] },
 *   agent: auditorAgent,
 *   input: (args) => `Audit ${args.version}`,
 * })
 */
export function defineSubagentTool<TArgs = Record<string, unknown>>(
  options: SubagentToolOptions<TArgs>,
): ToolDefinition<TArgs> {
  const spec: SubagentSpec<TArgs> = {
    agent: options.agent,
    input: options.input,
    ...(options.result ? { result: options.result } : {}),
  }
  return {
    name: options.name,
    description: options.description,
    parameters: options.parameters,
    approval: options.approval ?? 'never',
    ...(options.authorize ? { authorize: options.authorize } : {}),
    ...(options.approvers ? { approvers: options.approvers } : {}),
    ...(options.allowSelfApproval !== undefined ? { allowSelfApproval: options.allowSelfApproval } : {}),
    ...(options.timeout !== undefined ? { timeout: options.timeout } : {}),
    ...(options.onExpiry ? { onExpiry: options.onExpiry } : {}),
    subagent: spec as SubagentSpec,
    // The server offers the subagent's run on the context of this tool's calls (`ctx.runSubagent`).
    execute: (args, ctx) => {
      if (!ctx.runSubagent)
        throw new TypeError(`The subagent tool "${options.name}" runs only inside an Interlude server's turn.`)
      return ctx.runSubagent(args)
    },
  }
}
