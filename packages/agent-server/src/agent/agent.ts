import type { ModelProvider } from '../models/model.ts'
import type { ValidatorCache } from '../schema/validator-cache.ts'
import { SchemaDefinitionError } from '../schema/validator-cache.ts'
import type { ResolvedTool, ToolDefinition } from './tool.ts'
import { resolveTool } from './tool.ts'

/** An agent: system prompt, model, tools (docs/architecture.md). */
export interface AgentDefinition<TState = unknown> {
  readonly name?: string
  readonly systemPrompt?: string
  readonly model: ModelProvider
  readonly tools?: readonly ToolDefinition<unknown, TState>[]
  /** State of a new thread. @default () => ({}) */
  readonly initialState?: () => TState
  /** Model calls per run before the run fails with `RUN_FAILED`. @default 8 */
  readonly maxIterations?: number
  /**
   * What the other calls of a model response do while one of its calls waits for a person
   * (docs/decisions.md#a-turn-keeps-its-promises): `'hold'` — none of them runs before the batch is decided, then
   * all run in the model's order; `'run-free-calls'` — calls that need no decision run at once, before the pause.
   * @default 'hold'
   */
  readonly pausePolicy?: PausePolicy
}

export type PausePolicy = 'hold' | 'run-free-calls'

export interface ResolvedAgent {
  readonly definition: AgentDefinition
  readonly model: ModelProvider
  readonly tools: ReadonlyMap<string, ResolvedTool>
  readonly maxIterations: number
  readonly pausePolicy: PausePolicy
  initialState(): unknown
}

/** Normalises schemas and compiles every schema once up front, so a bad tool fails at startup. */
export function resolveAgent(
  definition: AgentDefinition,
  validators: ValidatorCache,
  parents: readonly AgentDefinition[] = [],
): ResolvedAgent {
  const tools = new Map<string, ResolvedTool>()
  for (const def of definition.tools ?? []) {
    if (tools.has(def.name)) throw new SchemaDefinitionError(`Duplicate tool name "${def.name}".`)
    let tool = resolveTool(def)
    if (def.subagent) {
      // A subagent's agent is resolved (and its schemas compiled) at startup too; an agent cannot contain itself.
      if (def.subagent.agent === definition || parents.includes(def.subagent.agent))
        throw new SchemaDefinitionError(
          `Tool "${def.name}": a subagent cannot run itself or an agent that contains it.`,
        )
      tool = { ...tool, subagent: resolveAgent(def.subagent.agent, validators, [...parents, definition]) }
    }
    // Inside a subagent, a remembered approval would make no rule and an external tool cannot settle: refuse at startup
    // rather than offer the person a choice that does nothing (docs/approvals.md#subagents).
    if (parents.length > 0 && tool.rememberScopes.length > 0)
      throw new SchemaDefinitionError(`Tool "${def.name}": a subagent's tool cannot offer remember.`)
    if (parents.length > 0 && tool.kind === 'external')
      throw new SchemaDefinitionError(`Tool "${def.name}": an external tool cannot run inside a subagent.`)
    validators.compile(tool.parameters)
    validators.compile(tool.approvalSchema)
    if (def.human) validators.compile(def.human.responseSchema)
    tools.set(tool.name, tool)
  }
  const maxIterations = definition.maxIterations ?? 8
  if (!Number.isInteger(maxIterations) || maxIterations < 1)
    throw new RangeError('maxIterations must be a positive integer.')
  const pausePolicy = definition.pausePolicy ?? 'hold'
  if (pausePolicy !== 'hold' && pausePolicy !== 'run-free-calls')
    throw new RangeError('pausePolicy must be "hold" or "run-free-calls".')
  return {
    definition,
    model: definition.model,
    tools,
    maxIterations,
    pausePolicy,
    initialState: () => (definition.initialState ? definition.initialState() : {}),
  }
}
