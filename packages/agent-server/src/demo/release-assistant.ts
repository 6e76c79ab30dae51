import type { Message } from '@interlude/protocol'
import type { AgentDefinition } from '../agent/agent.ts'
import { askUser } from '../agent/ask-user.ts'
import type { ToolDefinition } from '../agent/tool.ts'
import { defineTool } from '../agent/tool.ts'
import type { ModelProvider, ModelRequest } from '../models/model.ts'
import type { ScriptedResponse } from '../models/scripted.ts'
import { scriptedModel } from '../models/scripted.ts'
import { maintenanceSummary, scheduleMaintenance } from './maintenance-window.ts'
import { rollback } from './rollback.ts'
import { notifyOncall } from './notify-oncall.ts'
import { withProductionQuorum } from './production-quorum.ts'
import { auditorTool } from './auditor.ts'
import type { AuditRecord } from './auditor.ts'
import type { RollbackRecord, SnapshotRecord } from './rollback.ts'
import { checkChangelog, checksChangelog } from './changelog.ts'
import type { ChangelogCheck } from './changelog.ts'
import { deployOnFleet, PROCESS_FLEET } from './fleet.ts'
import type { Fleet } from './fleet.ts'
import { checkStatus, guardrailScript, noSecretsGuardrail, semverGuardrail } from './guardrails.ts'
import type { GuardrailDefinition } from '../agent/guardrail.ts'

/** The demo agent's thread state. */
export interface ReleaseState {
  releases: { version: string; toolCallId: string }[]
  deployments: { operationId: string; version: string; environment: 'staging' | 'production' }[]
  /** Confirmed rollbacks ("rollback vX"); absent in threads from before the rollback tool. */
  rollbacks?: RollbackRecord[]
  /** Sign-offs of the auditor subagent ("audit vX"); absent until the first one. */
  audits?: AuditRecord[]
  /** `check_changelog` calls ("check the changelog and deploy vX"); absent until the first one. */
  changelogChecks?: ChangelogCheck[]
  /** Pre-rollback snapshots, one per rollback call; absent until the first one. */
  snapshots?: SnapshotRecord[]
}

export const ENVIRONMENT_CHOICE_SCHEMA = {
  type: 'object',
  properties: {
    environment: { type: 'string', enum: ['staging', 'production'] },
    notes: { type: 'string', maxLength: 2000 },
  },
  required: ['environment'],
  additionalProperties: false,
} as const

const VERSION_SCHEMA = { type: 'string', minLength: 1, maxLength: 64 } as const

const publishRelease = defineTool<{ version: string }, ReleaseState>({
  name: 'publish_release',
  description: 'Publish a release of the given version.',
  parameters: {
    type: 'object',
    properties: { version: VERSION_SCHEMA },
    required: ['version'],
    additionalProperties: false,
  },
  approval: 'always',
  guardrails: [semverGuardrail],
  // "Always for this thread": a later release in the same thread publishes without asking (deploy still asks).
  remember: 'thread',
  approvalMessage: (args) => `Publish release ${args.version}?`,
  execute: (args, ctx) => {
    ctx.updateState((state) =>
      state.releases.some((r) => r.toolCallId === ctx.idempotencyKey)
        ? state
        : { ...state, releases: [...state.releases, { version: args.version, toolCallId: ctx.idempotencyKey }] },
    )
    return { published: args.version }
  },
})

const deploy = defineTool<{ version: string; environment: 'staging' | 'production' }, ReleaseState>({
  name: 'deploy',
  description: 'Deploy a version to an environment.',
  parameters: {
    type: 'object',
    properties: { version: VERSION_SCHEMA, environment: { type: 'string', enum: ['staging', 'production'] } },
    required: ['version', 'environment'],
    additionalProperties: false,
  },
  approval: 'always',
  allowEdits: true,
  guardrails: [semverGuardrail],
  approvalMessage: (args) => `Deploy ${args.version} to ${args.environment}?`,
  // A bounded grant (docs/demo-agent.md#bounded-grants): approving a deploy to staging may also allow up to 10 later
  // staging deploys, in this thread or in all of the owner's threads; production always asks.
  grant: { scopes: ['thread', 'principal'], maxCalls: 10, offers: (args) => args.environment === 'staging' },
  execute: (args, ctx) => {
    const operation = { operationId: ctx.idempotencyKey, version: args.version, environment: args.environment }
    // The ledger already guarantees one execution per toolCallId; the operation id makes the
    // effect itself idempotent too.
    ctx.updateState((state) =>
      state.deployments.some((d) => d.operationId === operation.operationId)
        ? state
        : { ...state, deployments: [...state.deployments, operation] },
    )
    return { deployed: true, ...operation }
  },
})

const askEnvironment = askUser({ responseSchema: ENVIRONMENT_CHOICE_SCHEMA })

function textOf(message: Message): string {
  const content = (message as { content?: unknown }).content
  if (typeof content === 'string') return content
  if (Array.isArray(content)) {
    return content
      .map((part: unknown) =>
        typeof part === 'object' && part !== null && 'text' in part ? String((part as { text: unknown }).text) : '',
      )
      .join(' ')
  }
  return ''
}

/** The version in a message: `v2.1`, or a tag like `vNEXT` (which the `semver` guardrail stops); default v1.0.0. */
export function versionOf(text: string): string {
  return /\bv\d+(?:\.\d+)*\b/i.exec(text)?.[0] ?? /\bv[A-Z][A-Z0-9_-]*\b/.exec(text)?.[0] ?? 'v1.0.0'
}

export function environmentOf(text: string): 'staging' | 'production' {
  return /production/i.test(text) ? 'production' : 'staging'
}

interface ToolOutcome {
  readonly name: string
  readonly args: Record<string, unknown>
  readonly result: Record<string, unknown> | string
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text) as unknown
  } catch {
    return text
  }
}

/** Tool calls of this turn paired with their results. */
function outcomesSince(messages: readonly Message[], from: number): ToolOutcome[] {
  const outcomes: ToolOutcome[] = []
  const results = new Map<string, unknown>()
  for (const m of messages.slice(from)) if (m.role === 'tool') results.set(m.toolCallId, parse(textOf(m)))
  for (const m of messages.slice(from)) {
    if (m.role !== 'assistant') continue
    for (const call of m.toolCalls ?? []) {
      let args = parse(call.function.arguments)
      let result: unknown = results.get(call.id) ?? 'no result'
      // A person edited the arguments (docs/approvals.md#edited-arguments): the result says which ran.
      if (typeof result === 'object' && result !== null && 'editedArguments' in result) {
        const edited = result as { editedArguments: unknown; result: unknown }
        args = edited.editedArguments
        result = edited.result
      }
      outcomes.push({
        name: call.function.name,
        args: typeof args === 'object' && args !== null ? (args as Record<string, unknown>) : {},
        result: result as Record<string, unknown> | string,
      })
    }
  }
  return outcomes
}

function describe(outcome: ToolOutcome): string {
  const r = outcome.result
  const status = typeof r === 'object' && r !== null ? r.status : undefined
  if (outcome.name === 'publish_release') {
    const version = String(outcome.args.version ?? '?')
    if (status === 'denied')
      return `publish_release ${version} was denied${typeof r === 'object' && r.reason ? ` (${String(r.reason)})` : ''}`
    if (status === 'cancelled') return `publish_release ${version} was cancelled`
    if (status === 'error') return `publish_release ${version} failed`
    return `published ${String((r as Record<string, unknown>).published ?? version)}`
  }
  if (outcome.name === 'deploy') {
    const what = `${String(outcome.args.version ?? '?')} to ${String(outcome.args.environment ?? '?')}`
    if (status === 'denied')
      return `deploy ${what} was denied${typeof r === 'object' && r.reason ? ` (${String(r.reason)})` : ''}`
    if (status === 'cancelled') return `deploy ${what} was cancelled`
    if (status === 'error') return `deploy ${what} failed`
    const d = r as Record<string, unknown>
    return `deployed ${String(d.version)} to ${String(d.environment)} (operation ${String(d.operationId)})`
  }
  if (outcome.name === 'auditor') {
    const version = String(outcome.args.version ?? '?')
    if (status === 'cancelled') return `the audit of ${version} was cancelled`
    if (status === 'error') return `the audit of ${version} failed`
    const report = typeof r === 'object' && typeof r.report === 'string' ? r.report : 'no report'
    return `the auditor reported: ${report.replace(/\.$/, '')}`
  }
  if (outcome.name === 'notify_oncall') {
    if (status === 'unknown') return `the page about ${String(outcome.args.version ?? '?')} got no answer in time`
    return `on-call answered: ${typeof r === 'string' ? r : JSON.stringify(r)}`
  }
  if (outcome.name === 'rollback') {
    const version = String(outcome.args.version ?? '?')
    if (status === 'cancelled') return `rollback of ${version} was cancelled`
    if (status === 'error') return `rollback of ${version} failed`
    const done = typeof r === 'object' && r.rolledBack === true
    if (!done) return `rollback of ${version} was not confirmed; nothing changed`
    const count = Array.isArray((r as Record<string, unknown>).deployments)
      ? ((r as Record<string, unknown>).deployments as unknown[]).length
      : 0
    return `rolled back ${version} (${count} deployment${count === 1 ? '' : 's'})`
  }
  return `${outcome.name} finished`
}

/** "deploy vX to staging" of a version this thread published already: only the deploy (docs/demo-agent.md). */
function redeploysToStaging(text: string, environment: string, version: string, state: unknown): boolean {
  if (environment !== 'staging' || !/\bdeploy\b/i.test(text) || /release|publish/i.test(text)) return false
  const releases = (state as Partial<ReleaseState> | undefined)?.releases
  return Array.isArray(releases) && releases.some((r) => r.version === version)
}

/** The release assistant's script (docs/demo-agent.md): deterministic on the last user message. */
export function releaseAssistantScript(request: ModelRequest): ScriptedResponse {
  const messages = request.messages
  let lastUser = -1
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]!.role === 'user') {
      lastUser = i
      break
    }
  }
  const userText = lastUser >= 0 ? textOf(messages[lastUser]!) : ''
  const outcomes = lastUser >= 0 ? outcomesSince(messages, lastUser + 1) : []

  const guarded = guardrailScript(
    userText,
    environmentOf(userText),
    outcomes.filter((o) => o.name === 'check_status').length,
  )
  if (guarded) return guarded
  if (outcomes.length > 0) {
    const schedule = outcomes.find((o) => o.name === 'schedule_maintenance')
    if (schedule) return { text: maintenanceSummary(schedule.result) }
    const ask = outcomes.find((o) => o.name === 'ask_user')
    if (ask) {
      const r = ask.result
      if (typeof r === 'object' && r !== null && typeof r.environment === 'string') {
        const notes = typeof r.notes === 'string' && r.notes.length > 0 ? ` Notes: ${r.notes}.` : ''
        return { text: `You chose ${r.environment}. I will use ${r.environment} from now on.${notes}` }
      }
      return { text: 'No environment was chosen, so I will keep the current setting.' }
    }
    const ran = outcomes.filter(
      (o) => typeof o.result !== 'object' || !['denied', 'cancelled', 'error'].includes(String(o.result.status)),
    )
    const summary = outcomes.map(describe).join('; ')
    const head =
      ran.length === outcomes.length ? 'All steps ran.' : ran.length === 0 ? 'Nothing ran.' : 'Some steps ran.'
    return { text: `${head} Summary: ${summary}.` }
  }

  if (/\bpage\b.*\bon-?call\b/i.test(userText)) {
    const version = versionOf(userText)
    return {
      text: `I paged the on-call engineer about ${version}; their answer arrives from the paging system.`,
      toolCalls: [{ name: 'notify_oncall', args: { version } }],
    }
  }
  if (/\baudit\b/i.test(userText)) {
    const version = versionOf(userText)
    return {
      text: `I will ask the auditor to audit ${version}; it asks you before it signs off.`,
      toolCalls: [{ name: 'auditor', args: { version } }],
    }
  }
  if (/\broll ?back\b/i.test(userText)) {
    const version = versionOf(userText)
    return {
      text: `I will roll back ${version}; the rollback tool will ask you to confirm the affected deployments.`,
      // "carefully": the tool asks twice (a memoised snapshot before the questions, docs/demo-agent.md).
      toolCalls: [
        { name: 'rollback', args: /\bcareful(ly)?\b/i.test(userText) ? { version, doubleCheck: true } : { version } },
      ],
    }
  }
  if (checksChangelog(userText)) {
    const version = versionOf(userText)
    const environment = environmentOf(userText)
    return {
      text: `I will check the changelog of ${version}, then deploy it to ${environment} (the deploy needs your approval).`,
      toolCalls: [
        { name: 'check_changelog', args: { version } },
        { name: 'deploy', args: { version, environment } },
      ],
    }
  }
  if (/deploy|release/i.test(userText)) {
    const version = versionOf(userText)
    const environment = environmentOf(userText)
    if (redeploysToStaging(userText, environment, version, request.state)) {
      return {
        text: `${version} is published already: deploy ${version} to staging (it asks unless a grant allows it).`,
        toolCalls: [{ name: 'deploy', args: { version, environment } }],
      }
    }
    return {
      text: `Plan: publish release ${version}, then deploy ${version} to ${environment}. Both steps need your approval.`,
      toolCalls: [
        { name: 'publish_release', args: { version } },
        { name: 'deploy', args: { version, environment } },
      ],
    }
  }
  if (/\bschedule\b|maintenance/i.test(userText)) {
    return {
      text: 'Let me ask when and how the maintenance window should run.',
      toolCalls: [{ name: 'schedule_maintenance', args: { question: 'When should the maintenance window run?' } }],
    }
  }
  if (/\bask\b|choose/i.test(userText)) {
    return {
      text: 'Let me ask which environment you want.',
      toolCalls: [{ name: 'ask_user', args: { question: 'Which environment should I use?' } }],
    }
  }
  return {
    text: 'I can publish and deploy releases. Try "deploy v2.1 to production", or ask me to choose an environment.',
  }
}

export interface ReleaseAssistantOptions {
  /** The model; defaults to the scripted release-assistant model. */
  readonly model?: ModelProvider
  /** Token pacing of the scripted model, in ms. @default 0 */
  readonly pacingMs?: number
  /** Principals who may post `notify_oncall`'s result besides the thread's owner (`--oncall`). @default none */
  readonly oncall?: readonly string[]
  /**
   * Approvals a `deploy` to production needs (`--production-quorum`), from `approvers`; above 1 never the
   * requester's own (docs/demo-agent.md). @default 1: one answer of the owner or an approver, as before
   */
  readonly productionQuorum?: number
  /** The server's `approvers` (`--approver`): who votes on a production deploy under a quorum. @default none */
  readonly approvers?: readonly string[]
  /**
   * The simulated fleet `deploy` observes and changes. @default the process's one (`PROCESS_FLEET`), shared by every
   * thread and every `releaseAssistant()` of the process, so that servers in one process (replicas in a test, a
   * restart in place) see one fleet
   */
  readonly fleet?: Fleet
}

export const RELEASE_ASSISTANT_PROMPT =
  'You are a release assistant. You can publish releases and deploy them to staging or production with the ' +
  'publish_release and deploy tools (a person approves each call), and ask the user to choose an environment ' +
  'with ask_user, or when and how to run a maintenance window with schedule_maintenance. rollback rolls back a ' +
  'version (it asks for confirmation itself); auditor runs the auditor subagent, which asks before it signs off. Version strings look like v2.1; default to v1.0.0 and to staging. After tools ran, summarise ' +
  'what ran and what was denied.'

/** The demo agent (docs/demo-agent.md), served by the CLI by default. */
export function releaseAssistant(options: ReleaseAssistantOptions = {}): AgentDefinition<ReleaseState> {
  const tools: ToolDefinition<unknown, ReleaseState>[] = [
    publishRelease,
    deployOnFleet(withProductionQuorum(deploy, options), options.fleet ?? PROCESS_FLEET) as ToolDefinition<
      unknown,
      ReleaseState
    >,
    askEnvironment,
    scheduleMaintenance,
    rollback as ToolDefinition<unknown, ReleaseState>,
    auditorTool(options.pacingMs ?? 0) as ToolDefinition<unknown, ReleaseState>,
    notifyOncall(options.oncall) as ToolDefinition<unknown, ReleaseState>,
    checkChangelog as ToolDefinition<unknown, ReleaseState>,
    checkStatus as ToolDefinition<unknown, ReleaseState>,
  ]
  return {
    name: 'release-assistant',
    systemPrompt: RELEASE_ASSISTANT_PROMPT,
    model: options.model ?? scriptedModel(releaseAssistantScript, { pacingMs: options.pacingMs ?? 0 }),
    tools,
    guardrails: [noSecretsGuardrail as GuardrailDefinition],
    // "check status until green" loops; the budget asks a person (docs/demo-agent.md#guardrails-and-budgets).
    maxIterations: 8,
    initialState: () => ({ releases: [], deployments: [] }),
  }
}
