import type { Message } from '@interlude/protocol'
import type { AgentDefinition } from '../agent/agent.ts'
import { defineTool } from '../agent/tool.ts'
import type { ToolDefinition } from '../agent/tool.ts'
import type { ModelChunk, ModelProvider, ModelRequest } from '../models/model.ts'
import type { ScriptedResponse } from '../models/scripted.ts'
import { scriptedModel } from '../models/scripted.ts'

/**
 * A scripted model for tool tests: the last user message is a JSON `ScriptedResponse` for the
 * first model call of the turn; after tool results it answers `done: <tool results>` (so a test
 * can see exactly what the model read).
 */
export function commandScript(request: ModelRequest): ScriptedResponse {
  const messages = request.messages
  let lastUser = -1
  for (let i = messages.length - 1; i >= 0; i--)
    if (messages[i]!.role === 'user') {
      lastUser = i
      break
    }
  const after = messages.slice(lastUser + 1)
  const results = after.filter((m): m is Extract<Message, { role: 'tool' }> => m.role === 'tool')
  if (results.length > 0) return { text: `done: ${results.map((r) => String(r.content)).join(' | ')}` }
  const user = messages[lastUser]
  try {
    return JSON.parse(String(user?.content ?? '{}')) as ScriptedResponse
  } catch {
    return { text: 'ok' }
  }
}

export function commandAgent(tools: ToolDefinition[], extra: Partial<AgentDefinition> = {}): AgentDefinition {
  return { model: scriptedModel(commandScript), tools, initialState: () => ({ log: [] }), ...extra }
}

/** A tool that records in the state's `log` (of `commandAgent`) that it ran, in order. */
export function loggingTool(name: string, options: Partial<ToolDefinition> = {}): ToolDefinition {
  return defineTool<Record<string, unknown>, { log: string[] }>({
    name,
    description: name,
    parameters: { type: 'object' },
    execute: (_args, ctx) => {
      ctx.updateState((s) => ({ ...s, log: [...s.log, name] }))
      return { ran: name }
    },
    ...options,
  } as ToolDefinition<Record<string, unknown>, { log: string[] }>) as ToolDefinition
}

/** A model that streams one token, then waits until `release()` (for busy/disconnect tests). */
export function gatedModel(): { model: ModelProvider; release(): void; started: Promise<void> } {
  let release!: () => void
  let markStarted!: () => void
  const gate = new Promise<void>((resolve) => (release = resolve))
  const started = new Promise<void>((resolve) => (markStarted = resolve))
  const model: ModelProvider = {
    name: 'gated',
    async *stream(): AsyncGenerator<ModelChunk> {
      yield { type: 'text', delta: 'waiting ' }
      markStarted()
      await gate
      yield { type: 'text', delta: 'released' }
    },
  }
  return { model, release: () => release(), started }
}

/** A model that always fails with a message that must never reach a client. */
export function failingModel(secret: string): ModelProvider {
  return {
    name: 'failing',
    // eslint-disable-next-line require-yield
    async *stream(): AsyncGenerator<ModelChunk> {
      throw new Error(secret)
    },
  }
}
