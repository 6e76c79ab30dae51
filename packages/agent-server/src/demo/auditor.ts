import type { Message } from '@interlude/protocol'
import type { AgentDefinition } from '../agent/agent.ts'
import { defineSubagentTool } from '../agent/subagent-tool.ts'
import { defineTool } from '../agent/tool.ts'
import type { ModelRequest } from '../models/model.ts'
import type { ScriptedResponse } from '../models/scripted.ts'
import { scriptedModel } from '../models/scripted.ts'

/** What the demo records of a signed-off audit (docs/demo-agent.md). */
export interface AuditRecord {
  readonly version: string
  readonly toolCallId: string
  readonly signedOffFor: string
}

interface AuditState {
  audits?: AuditRecord[]
}

const VERSION = { type: 'string', minLength: 1, maxLength: 64 } as const

/** The auditor's own tool: a person approves each sign-off (its interrupt carries the auditor's `subagentRunId`). */
const signOff = defineTool<{ version: string }, AuditState>({
  name: 'sign_off',
  description: 'Sign off the audit of a version.',
  parameters: { type: 'object', properties: { version: VERSION }, required: ['version'], additionalProperties: false },
  approval: 'always',
  approvalMessage: (args) => `Sign off the audit of ${args.version}?`,
  execute: (args, ctx) => {
    const record: AuditRecord = { version: args.version, toolCallId: ctx.idempotencyKey, signedOffFor: ctx.principal }
    ctx.updateState((state) => {
      const audits = state.audits ?? []
      return audits.some((a) => a.toolCallId === record.toolCallId) ? state : { ...state, audits: [...audits, record] }
    })
    return { signedOff: args.version }
  },
})

function lastText(messages: readonly Message[], role: Message['role']): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!
    if (m.role === role) return typeof m.content === 'string' ? m.content : ''
  }
  return ''
}

/** The auditor's script: check, then ask to sign off; after the result, report it. */
export function auditorScript(request: ModelRequest): ScriptedResponse {
  const version = /\bv\d+(?:\.\d+)*\b/i.exec(lastText(request.messages, 'user'))?.[0] ?? 'v1.0.0'
  const last = request.messages[request.messages.length - 1]
  if (last?.role === 'tool') {
    const result = typeof last.content === 'string' ? last.content : ''
    if (result.includes('"signedOff"')) return { text: `Audit of ${version} passed and is signed off.` }
    if (result.includes('"denied"')) return { text: `Audit of ${version} passed, but the sign-off was denied.` }
    return { text: `Audit of ${version} passed; the sign-off did not happen.` }
  }
  return {
    text: `Auditing ${version}: changelog, tests and deployments check out.`,
    toolCalls: [{ name: 'sign_off', args: { version } }],
  }
}

export function auditorAgent(pacingMs = 0): AgentDefinition<AuditState> {
  return {
    name: 'auditor',
    systemPrompt: 'You audit releases and sign them off with sign_off (a person approves each sign-off).',
    model: scriptedModel(auditorScript, { pacingMs }),
    tools: [signOff],
    maxIterations: 4,
  }
}

/** `auditor` in the release assistant: "audit vX" runs it as a subagent. */
export function auditorTool(pacingMs = 0) {
  return defineSubagentTool<{ version: string }>({
    name: 'auditor',
    description: 'Run the auditor subagent on a version; it asks for approval to sign off.',
    parameters: {
      type: 'object',
      properties: { version: VERSION },
      required: ['version'],
      additionalProperties: false,
    },
    agent: auditorAgent(pacingMs) as AgentDefinition,
    input: (args) => `Audit release ${args.version}.`,
    result: (answer) => ({ report: answer }),
  })
}
