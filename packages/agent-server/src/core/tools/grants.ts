import { InterludeError, isRfc3339 } from '@interlude/protocol'
import type { DecisionRecord, Grant, GrantRequest, ResumeEntry } from '@interlude/protocol'
import type { ResolvedTool } from '../../agent/tool.ts'
import { grantOffered } from '../../agent/tool-grant.ts'
import type { GrantStore } from '../../store/grants.ts'
import type { BatchRecord } from '../../store/store.ts'
import { argsMatch, provenance } from './permission-rules.ts'
import type { RuleMakerCheck, RuleUse } from './permission-rules.ts'

/**
 * Bounded grants (docs/approvals.md#bounded-grants): the grants an admitted decision makes, checked before anything is
 * written, and the grant that approves a later call, taken atomically in the store.
 */

/** What a decision's grants are made from (admission, after the payloads matched their schemas). */
export interface GrantDecision {
  readonly tools: ReadonlyMap<string, ResolvedTool>
  readonly batch: BatchRecord
  readonly entries: readonly ResumeEntry[]
  readonly owner: string
  /** The client's thread id. */
  readonly threadId: string
  readonly decidedBy: string
  readonly now: number
  /** Whether the store keeps grants (`Store.grants`). */
  readonly stored: boolean
}

const refuse = (interruptId: string, path: string, message: string) =>
  new InterludeError('RESUME_PAYLOAD_INVALID', `Grant refused: ${message}`, {
    details: { errors: { [interruptId]: [{ path: `/grant${path}`, message, keyword: 'grant' }] } },
  })

/** The grants of the decision's approvals that carry `grant`; throws the first refusal (then nothing is written). */
export function grantsOfDecision(decision: GrantDecision): Grant[] {
  const grants: Grant[] = []
  for (const entry of decision.entries) {
    if (entry.status !== 'resolved') continue
    const payload = entry.payload as { readonly approved?: unknown; readonly grant?: GrantRequest } | undefined
    if (payload?.grant === undefined) continue
    const item = decision.batch.interrupts.find((i) => i.interrupt.id === entry.interruptId)
    if (item === undefined) continue
    grants.push(grantOf(decision, item.interrupt.id, item.toolName, item.interrupt.metadata, payload))
  }
  return grants
}

function grantOf(
  decision: GrantDecision,
  interruptId: string,
  toolName: string,
  metadata: Record<string, unknown> | undefined,
  payload: { readonly approved?: unknown; readonly grant?: GrantRequest },
): Grant {
  const request = payload.grant!
  const tool = decision.tools.get(toolName)
  const option = tool?.grant
  if (!decision.stored) throw refuse(interruptId, '', 'this server keeps no grants.')
  if (tool === undefined || option === undefined || !grantOffered(tool.definition.grant, metadata?.arguments))
    throw refuse(interruptId, '', 'this call offers no grant.')
  if (payload.approved !== true) throw refuse(interruptId, '', 'a grant comes with an approval (approved: true).')
  const { calls, scope, match } = request
  if (!Number.isInteger(calls) || calls < 1 || calls > option.maxCalls)
    throw refuse(interruptId, '/calls', `calls must be an integer from 1 to ${option.maxCalls}.`)
  if (!option.scopes.includes(scope)) throw refuse(interruptId, '/scope', `scope must be one of ${option.scopes}.`)
  const other = Object.keys(match ?? {}).find((arg) => !option.match.includes(arg))
  if (other !== undefined) throw refuse(interruptId, '/match', `"${other}" is not an argument a grant may match.`)
  const until = untilOf(request.until, option.maxDurationMs, decision.now, interruptId)
  return {
    grantId: `grant_${interruptId.replace(/^int_/, '')}`,
    owner: decision.owner,
    scope,
    ...(scope === 'thread' ? { threadId: decision.threadId } : {}),
    toolName,
    ...(match !== undefined && Object.keys(match).length > 0 ? { match } : {}),
    calls,
    callsLeft: calls,
    ...(until !== undefined ? { until: new Date(until).toISOString() } : {}),
    createdBy: decision.decidedBy,
    createdAt: new Date(decision.now).toISOString(),
    sourceInterruptId: interruptId,
    madeUnder: provenance(tool, decision.decidedBy === decision.owner ? 'owner' : 'decider'),
  }
}

/** `until` in ms: in the future, within `maxDuration` (which is the deadline when none is given). */
function untilOf(until: string | undefined, maxMs: number | undefined, now: number, interruptId: string) {
  if (until === undefined) return maxMs === undefined ? undefined : now + maxMs
  const at = isRfc3339(until) ? Date.parse(until) : Number.NaN
  if (!Number.isFinite(at)) throw refuse(interruptId, '/until', 'until must be an RFC 3339 date-time.')
  if (at <= now) throw refuse(interruptId, '/until', 'until must be in the future.')
  if (maxMs !== undefined && at > now + maxMs)
    throw refuse(interruptId, '/until', `until must be at most ${maxMs / 1000} s ahead.`)
  return at
}

/** A call a grant may approve: `RuleUse` plus the run that takes it. */
export interface GrantUse extends RuleUse {
  /** The thread's store key. */
  readonly threadKey: string
  readonly runId: string
  readonly now: number
}

/**
 * The first grant (oldest first) that approves this call: it matches, its maker could still decide the call now
 * (the rules' check), and the store let this call take one of its calls. Its `via: "grant"` record is written by the
 * take; `undefined` when no grant approves it.
 */
export async function takeGrant(
  use: GrantUse,
  store: GrantStore,
  check: RuleMakerCheck | undefined,
): Promise<DecisionRecord | undefined> {
  const { tool, args, owner, threadId, now } = use
  if (!grantOffered(tool.definition.grant, args)) return undefined
  const candidates = await store.match({ owner, threadId, toolName: tool.name, now })
  for (const grant of candidates) {
    if (!tool.grant?.scopes.includes(grant.scope) || !argsMatch(grant.match, args)) continue
    const maker = { ruleId: grant.grantId, createdBy: grant.createdBy }
    if (check !== undefined && !(await check(maker, use))) continue
    const { threadKey, toolCallId, runId } = use
    const taken = await store.take({ grantId: grant.grantId, owner, threadId: threadKey, toolCallId, runId, now })
    if (taken) return taken
  }
  return undefined
}
