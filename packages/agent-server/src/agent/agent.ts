import type { ModelProvider } from '../models/model.ts'
import type { ValidatorCache } from '../schema/validator-cache.ts'
import { SchemaDefinitionError } from '../schema/validator-cache.ts'
import type { ResolvedTool, ToolDefinition } from './tool.ts'
import { guardrailsByName, resolveGuardrail } from './guardrail.ts'
import type { GuardrailDefinition, ResolvedGuardrail } from './guardrail.ts'
import { resolveTool } from './tool.ts'

/** An agent: system prompt, model, tools (docs/architecture.md). */
export interface AgentDefinition<TState = unknown> {
  readonly name?: string
  readonly systemPrompt?: string
  readonly model: ModelProvider
  readonly tools?: readonly ToolDefinition<unknown, TState>[]
  /** State of a new thread. @default () => ({}) */
  readonly initialState?: () => TState
  /**
   * Model calls per run before a person is asked for more (`interlude:budget`, docs/guardrails.md#budgets).
   * @default 8
   */
  readonly maxIterations?: number
  /** Tokens per run (as the provider reports them) before a person is asked for more. @default no limit */
  readonly maxTokensPerRun?: number
  /**
   * What a reached budget does: `'ask'` pauses with `interlude:budget`; `'stop'` ends the run at once
   * (`RUN_FINISHED` success, reason `max_iterations` or `budget_exhausted`), for agents nobody watches. @default 'ask'
   */
  readonly onBudget?: 'ask' | 'stop'
  /** Checks of user messages, every tool call's arguments and final answers (docs/guardrails.md). */
  readonly guardrails?: readonly GuardrailDefinition[]
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
  readonly maxTokensPerRun: number | undefined
  readonly onBudget: 'ask' | 'stop'
  readonly pausePolicy: PausePolicy
  /** The agent's guardrails by where they look, and each tool's (`on: 'args'`) by tool name. */
  readonly guardrails: { readonly [On in ResolvedGuardrail['on']]: readonly ResolvedGuardrail[] }
  readonly toolGuardrails: ReadonlyMap<string, readonly ResolvedGuardrail[]>
  /** Every guardrail by name (whose deciders answer its interrupts). */
  readonly guardrailsByName: ReadonlyMap<string, ResolvedGuardrail>
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
  const maxTokensPerRun = definition.maxTokensPerRun
  if (maxTokensPerRun !== undefined && (!Number.isInteger(maxTokensPerRun) || maxTokensPerRun < 1))
    throw new RangeError('maxTokensPerRun must be a positive integer.')
  const onBudget = definition.onBudget ?? 'ask'
  if (onBudget !== 'ask' && onBudget !== 'stop') throw new RangeError('onBudget must be "ask" or "stop".')
  const own = (definition.guardrails ?? []).map((g) => resolveGuardrail(g, `Agent "${definition.name ?? 'agent'}"`))
  const toolGuardrails = new Map<string, readonly ResolvedGuardrail[]>()
  for (const def of definition.tools ?? []) {
    const list = (def.guardrails ?? []).map((g) => resolveGuardrail(g as GuardrailDefinition, `Tool "${def.name}"`))
    const misplaced = list.find((g) => g.on !== 'args')
    if (misplaced) throw new RangeError(`Tool "${def.name}": guardrail "${misplaced.name}" must be on: 'args'.`)
    if (list.length > 0) toolGuardrails.set(def.name, list)
  }
  const pausePolicy = definition.pausePolicy ?? 'hold'
  if (pausePolicy !== 'hold' && pausePolicy !== 'run-free-calls')
    throw new RangeError('pausePolicy must be "hold" or "run-free-calls".')
  return {
    definition,
    model: definition.model,
    tools,
    maxIterations,
    maxTokensPerRun,
    onBudget,
    pausePolicy,
    guardrails: {
      input: own.filter((g) => g.on === 'input'),
      args: own.filter((g) => g.on === 'args'),
      output: own.filter((g) => g.on === 'output'),
    },
    toolGuardrails,
    guardrailsByName: guardrailsByName(own, toolGuardrails.values()),
    initialState: () => (definition.initialState ? definition.initialState() : {}),
  }
}
