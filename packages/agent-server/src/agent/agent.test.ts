import { describe, expect, it } from 'vitest'
import { scriptedModel } from '../models/scripted.ts'
import { SchemaDefinitionError, ValidatorCache } from '../schema/validator-cache.ts'
import type { AgentDefinition } from './agent.ts'
import { resolveAgent } from './agent.ts'
import { defineSubagentTool } from './subagent-tool.ts'
import type { ToolDefinition } from './tool.ts'
import { defineTool } from './tool.ts'

const model = scriptedModel(() => ({ text: 'done' }))
const parameters = { type: 'object', properties: { version: { type: 'string' } }, required: ['version'] }

const remembered = defineTool({
  name: 'sign_off',
  description: 'Sign off',
  parameters,
  approval: 'always',
  remember: 'thread',
  execute: () => 'ok',
})
const external = defineTool({ name: 'ticket', description: 'Open a ticket', parameters, external: true })

/** A parent agent whose one tool runs `sub`. */
function parentOf(sub: AgentDefinition): AgentDefinition {
  return {
    name: 'parent',
    model,
    tools: [
      defineSubagentTool({ name: 'auditor', description: 'Audit', parameters, agent: sub, input: () => 'audit' }),
    ] as ToolDefinition[],
  }
}

const resolve = (agent: AgentDefinition) => resolveAgent(agent, new ValidatorCache())

describe('resolveAgent: subagents are checked at startup', () => {
  it('accepts a subagent whose tools need approval, and the same remembered or external tools at the top level', () => {
    const ok = defineTool({
      name: 'sign_off',
      description: 'Sign off',
      parameters,
      approval: 'always',
      execute: () => 1,
    })
    const resolved = resolve(parentOf({ name: 'sub', model, tools: [ok] as ToolDefinition[] }))
    expect(resolved.tools.get('auditor')?.subagent?.tools.has('sign_off')).toBe(true)
    expect(resolve({ name: 'top', model, tools: [remembered, external] as ToolDefinition[] }).tools.size).toBe(2)
  })

  it('refuses a subagent tool that offers remember: the choice would make no rule', () => {
    expect(() => resolve(parentOf({ name: 'sub', model, tools: [remembered] as ToolDefinition[] }))).toThrow(
      new SchemaDefinitionError(`Tool "sign_off": a subagent's tool cannot offer remember.`),
    )
  })

  it('refuses an external tool inside a subagent: nothing could settle it', () => {
    expect(() => resolve(parentOf({ name: 'sub', model, tools: [external] as ToolDefinition[] }))).toThrow(
      /an external tool cannot run inside a subagent/,
    )
  })

  it('refuses an agent that contains itself through a subagent', () => {
    const loop: { -readonly [K in keyof AgentDefinition]: AgentDefinition[K] } = { name: 'loop', model }
    loop.tools = [
      defineSubagentTool({ name: 'again', description: 'Again', parameters, agent: loop, input: () => 'x' }),
    ] as ToolDefinition[]
    expect(() => resolve(loop)).toThrow(/a subagent cannot run itself or an agent that contains it/)
  })
})
