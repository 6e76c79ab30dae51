import type { AgUiEvent, ResumeEntry } from '@interlude/protocol'
import type { ResolvedTool } from '../../agent/tool.ts'
import type { StoredInterrupt, ToolCallRecord } from '../../store/store.ts'
import { ev } from '../ev.ts'
import type { ApprovalPayload } from '../tools/approved-call.ts'
import { observeCall, observedAt, sameObservation, staleArguments, staleInterruptFor } from '../tools/observation.ts'
import { expiryDefaults } from './run-effect.ts'
import type { Turn } from './turn-state.ts'

/** An approved call whose observation changed while the person decided (docs/approvals.md#stale-approvals). */
export interface StaleCall {
  readonly item: StoredInterrupt
  readonly record: ToolCallRecord
  readonly tool: ResolvedTool
  readonly args: unknown
  readonly edited: boolean
  readonly before: unknown
  readonly after: unknown
}

export interface ApprovalChecks {
  readonly stale: readonly StaleCall[]
  /** Interrupt ids whose second observation threw: their calls are denied (fail closed). */
  readonly failed: ReadonlySet<string>
}

/**
 * The stale check, before anything of the batch runs: every approved call whose interrupt carries `observed` is
 * observed again with the arguments the interrupt showed (`metadata.arguments`: the model's, or a re-ask's) — an edit
 * is the person's own change, not a changed world. A stale call's re-ask is about the arguments it would run with
 * (edits included), so its `after` is observed with those.
 */
export async function checkApprovals(
  turn: Turn,
  items: readonly StoredInterrupt[],
  entries: ReadonlyMap<string, ResumeEntry>,
): Promise<ApprovalChecks> {
  const stale: StaleCall[] = []
  const failed = new Set<string>()
  for (const item of items) {
    const before = item.kind === 'approval' ? observedAt(item.interrupt) : undefined
    const entry = entries.get(item.interrupt.id)
    const payload = entry?.status === 'resolved' ? (entry.payload as ApprovalPayload | undefined) : undefined
    const record = turn.call(item.toolCallId)
    const tool = record ? turn.deps.agent.tools.get(record.toolName) : undefined
    if (!before || payload?.approved !== true || record?.status !== 'awaiting_decision' || !tool?.definition.observe)
      continue
    const again = staleArguments(item.interrupt)
    const shown = again?.args ?? parsedArgs(record)
    const edited = payload.editedArgs !== undefined
    const args = edited ? payload.editedArgs : shown
    // Arguments the schema refuses are rejected by the approval step; nothing to observe.
    if (!turn.deps.validators.validate(tool.parameters, args).ok) continue
    const ctx = turn.policyContext(record.toolCallId)
    let after = await observeCall(tool, shown, ctx, turn.deps.logError)
    if (after.ok && !sameObservation(before.value, after.value)) {
      if (edited) after = await observeCall(tool, args, ctx, turn.deps.logError)
      if (after.ok) {
        const call = { item, record, tool, args, edited: edited || again?.edited === true }
        stale.push({ ...call, before: before.value, after: after.value })
        continue
      }
    }
    if (!after.ok) failed.add(item.interrupt.id)
  }
  return { stale, failed }
}

/**
 * The stale calls' outcome: the decision record says `stale` (its event follows), and each call is asked again
 * (`interlude:stale`, `metadata: { before, after }`); the asks become the next batch.
 */
export async function* reaskStale(turn: Turn, stale: readonly StaleCall[]): AsyncGenerator<AgUiEvent> {
  let record
  for (const call of stale) record = (await turn.writes.markDecisionStale(call.item.interrupt.id)) ?? record
  if (record) yield ev.decision(record)
  for (const call of stale) {
    const approved = { args: call.args, edited: call.edited }
    const observed = { before: call.before, after: call.after }
    turn.asked.push(staleInterruptFor(call.tool, call.record.toolCallId, approved, observed, expiryDefaults(turn)))
  }
}

function parsedArgs(record: ToolCallRecord): unknown {
  try {
    return JSON.parse(record.argsText) as unknown
  } catch {
    return {}
  }
}
