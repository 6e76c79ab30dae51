import type { AgentDefinition } from '../agent/agent.ts'
import type { ToolDefinition } from '../agent/tool.ts'
import { defineTool } from '../agent/tool.ts'
import { scriptedModel } from '../models/scripted.ts'

/** The state of `opsAgent`: the services restarted, in order. */
export interface OpsState {
  restarts: string[]
}

type RestartArgs = { service: string }

/**
 * An agent whose one tool, `restart({ service })`, needs approval ("restart <service>" calls it), with the standing
 * permissions `policy` allows (`remember`, `rememberMatch`, `grant`): remembered rules and bounded grants
 * (docs/approvals.md#remembered-permissions, docs/approvals.md#bounded-grants).
 */
export function opsAgent(
  policy: Pick<ToolDefinition<RestartArgs, OpsState>, 'remember' | 'rememberMatch' | 'grant'>,
  /** Runs first in `restart`'s `execute`, with the call's id (what a test observes at the moment of the effect). */
  beforeRestart?: (toolCallId: string) => Promise<void>,
): AgentDefinition {
  const restart = defineTool<RestartArgs, OpsState>({
    name: 'restart',
    description: 'Restart a service.',
    parameters: {
      type: 'object',
      properties: { service: { type: 'string', minLength: 1 } },
      required: ['service'],
      additionalProperties: false,
    },
    approval: 'always',
    ...policy,
    execute: async (args, ctx) => {
      await beforeRestart?.(ctx.toolCallId)
      ctx.updateState((s) => ({ restarts: [...s.restarts, args.service] }))
      return { restarted: args.service }
    },
  })
  const agent: AgentDefinition<OpsState> = {
    name: 'ops',
    model: scriptedModel((request) => {
      const last = request.messages[request.messages.length - 1]!
      if (last.role === 'tool') return { text: 'Done.' }
      const service = /restart (\S+)/.exec(String((last as { content?: unknown }).content))?.[1] ?? 'web'
      return { toolCalls: [{ name: 'restart', args: { service } }] }
    }),
    tools: [restart as never],
    initialState: () => ({ restarts: [] }),
  }
  return agent as AgentDefinition
}
