import type { AgentDefinition } from '../agent/agent.ts'
import { defineSubagentTool } from '../agent/subagent-tool.ts'
import type { ToolDefinition } from '../agent/tool.ts'
import { defineTool } from '../agent/tool.ts'
import { scriptedModel } from '../models/scripted.ts'
import { commandAgent } from './test-agents.ts'

/**
 * The agents of the decider-rights tests (docs/approvals.md#who-may-decide): a `deploy` only `mgr` may approve, used
 * directly and inside a subagent tool `ops` that names no approvers. `ran` records who each deploy ran as.
 */
export function rightsAgent(
  overrides: {
    readonly deploy?: { readonly [K in keyof ToolDefinition]?: ToolDefinition[K] | undefined }
    readonly extra?: readonly ToolDefinition[]
  } = {},
) {
  const ran: { principal: string; env: unknown }[] = []
  const deploy = defineTool<{ env: string }>({
    name: 'deploy',
    description: 'Deploys to an environment.',
    parameters: { type: 'object', properties: { env: { type: 'string' } }, required: ['env'] },
    approval: 'always',
    approvers: ['mgr'],
    execute: (args, ctx) => {
      ran.push({ principal: ctx.principal, env: args.env })
      return { deployed: args.env }
    },
    ...overrides.deploy,
  } as ToolDefinition<{ env: string }>)
  const opsAgent: AgentDefinition = {
    name: 'ops',
    model: scriptedModel((request) =>
      request.messages.some((m) => m.role === 'tool')
        ? { text: 'ops done' }
        : { toolCalls: [{ name: 'deploy', args: { env: 'production' } }] },
    ),
    // A subagent's tools cannot offer remember (checked at startup).
    tools: [{ ...deploy, remember: undefined } as unknown as ToolDefinition],
  }
  const ops = defineSubagentTool<{ task: string }>({
    name: 'ops',
    description: 'Operations subagent.',
    parameters: { type: 'object', properties: { task: { type: 'string' } }, required: ['task'] },
    agent: opsAgent,
    input: (args) => args.task,
  })
  const agent = commandAgent([deploy, ops, ...(overrides.extra ?? [])] as ToolDefinition[])
  return { agent, ran }
}

/** The scripted user message that makes the command agent call `name` with `args`. */
export function call(name: string, args: unknown): string {
  return JSON.stringify({ toolCalls: [{ name, args }] })
}
