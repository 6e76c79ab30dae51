import path from 'node:path'
import { pathToFileURL } from 'node:url'
import type { AgentDefinition } from './agent.ts'

/**
 * The CLI's `--agent <module>`: a JavaScript module (ESM) whose default export is an `AgentDefinition`, or a
 * function returning one (sync or async) for agents that need set-up. Relative paths are read from the working
 * directory. Every failure is an `Error` whose message says what the module must look like.
 */
export async function loadAgentModule(specifier: string, cwd = process.cwd()): Promise<AgentDefinition> {
  const file = path.resolve(cwd, specifier)
  let loaded: { default?: unknown }
  try {
    loaded = (await import(pathToFileURL(file).href)) as { default?: unknown }
  } catch (error) {
    const reason = error instanceof Error ? error.message.split('\n')[0] : String(error)
    throw new Error(`--agent ${specifier}: the module could not be loaded (${reason})`, { cause: error })
  }
  let agent = loaded.default
  if (typeof agent === 'function') agent = await (agent as () => unknown)()
  if (!isAgentDefinition(agent)) {
    throw new Error(
      `--agent ${specifier}: the default export must be an agent ({ model, tools?, systemPrompt? }) or a function returning one`,
    )
  }
  return agent
}

function isAgentDefinition(value: unknown): value is AgentDefinition {
  if (typeof value !== 'object' || value === null) return false
  const { model, tools } = value as { model?: unknown; tools?: unknown }
  const streams =
    typeof model === 'object' && model !== null && typeof (model as { stream?: unknown }).stream === 'function'
  return streams && (tools === undefined || Array.isArray(tools))
}
