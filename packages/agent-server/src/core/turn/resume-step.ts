import type { AgUiEvent, RememberScope, ResumeEntry } from '@interlude/protocol'
import type { ResolvedTool } from '../../agent/tool.ts'
import type { StoredInterrupt, ToolCallRecord } from '../../store/store.ts'
import { clientThreadId } from '../../store/thread-key.ts'
import type { ResumeRunPlan } from '../run-plan.ts'
import { approvedCall, toolGone } from '../tools/approved-call.ts'
import type { ApprovalPayload, ApprovedCall } from '../tools/approved-call.ts'
import { staleArguments } from '../tools/observation.ts'
import { ruleFromApproval } from '../tools/permission-rules.ts'
import { parseCheckpoint } from '../tools/tool-asks.ts'
import { withAnswers } from '../tools/tool-interrupts.ts'
import { checkApprovals, reaskStale } from './stale-step.ts'
import { applyGuardrailDecision } from './guardrail-decision.ts'
import type { StaleCall } from './stale-step.ts'
import { requestedArgs, runHeld } from './held-calls.ts'
import { runEffect } from './run-effect.ts'
import { OBSERVE_FAILED, storeBatch } from './tool-step.ts'
import type { Step, Turn } from './turn-state.ts'

/**
 * The resume step: carries out the decision for each call of the batch, and runs the calls the pause held
 * (`pausePolicy: 'hold'`), all in the model's order (docs/decisions.md#a-turn-keeps-its-promises). A tool that asked
 * from inside `execute` runs again with its answers and may ask again: those questions become the next batch (the
 * returned pause), and the held calls after it wait for that batch too.
 */
export async function* applyDecisions(turn: Turn, plan: ResumeRunPlan): AsyncGenerator<AgUiEvent, Step | undefined> {
  if (plan.continuation) {
    // The dead attempt already paused again: the continuation step ends the run with that batch.
    const open = await turn.deps.store.getOpenBatch(turn.plan.threadId)
    if (open !== undefined && open.runId === turn.plan.runId) return undefined
  }
  const byId = new Map<string, ResumeEntry>(plan.decision.map((e) => [e.interruptId, e]))
  const byCall = new Map<string, StoredInterrupt[]>()
  for (const item of plan.batch.interrupts) byCall.set(item.toolCallId, [...(byCall.get(item.toolCallId) ?? []), item])
  // docs/approvals.md#stale-approvals: before anything runs, approved calls are observed again; if one is stale,
  // nothing of the batch runs and the stale calls are asked again.
  const checks = await checkApprovals(turn, plan.batch.interrupts, byId)
  if (checks.stale.length > 0) {
    yield* deferBatch(turn, plan.batch.interrupts, byId, checks.stale)
    return await storeBatch(turn, [])
  }
  for (const open of turn.openCalls()) {
    const record = turn.call(open.toolCallId)
    if (!record) continue
    const items = byCall.get(record.toolCallId)
    if (items === undefined) {
      // A held call after one that asked again waits for the new batch; so does one a stale re-ask deferred.
      const held =
        turn.isHeld(record) || (record.status === 'awaiting_decision' && !turn.batched.has(record.toolCallId))
      if (held && turn.asked.length === 0) yield* runHeld(turn, record, plan.allCancelled)
      continue
    }
    if (record.status !== 'awaiting_decision') continue
    const asks = items.filter((i) => i.kind === 'ask')
    // One re-execution per call, with all of its answers from this batch.
    if (asks.length > 0) {
      if (asks.some((i) => byId.has(i.interrupt.id))) yield* answerAsks(turn, asks, byId, record)
      continue
    }
    for (const item of items) {
      const entry = byId.get(item.interrupt.id)
      if (!entry) continue
      if (item.kind === 'guardrail') yield* applyGuardrailDecision(turn, item, entry, record)
      else if (checks.failed.has(item.interrupt.id))
        yield* turn.settle(record, 'denied', { status: 'denied', reason: OBSERVE_FAILED })
      else yield* applyDecision(turn, item, entry, record)
    }
  }
  return turn.asked.length > 0 ? await storeBatch(turn, []) : undefined
}

/**
 * A batch with a stale approval (docs/approvals.md#stale-approvals): nothing of it runs. The stale calls are asked
 * again; the batch's other approved calls keep their decision in their checkpoint and wait (deferred) with the held
 * calls, answers to questions are stored and wait too; denials, cancellations and `askUser` answers settle now (they
 * run nothing).
 */
async function* deferBatch(
  turn: Turn,
  items: readonly StoredInterrupt[],
  entries: ReadonlyMap<string, ResumeEntry>,
  stale: readonly StaleCall[],
): AsyncGenerator<AgUiEvent> {
  const staleIds = new Set(stale.map((s) => s.item.interrupt.id))
  const asked = new Map<string, StoredInterrupt[]>()
  for (const item of items) {
    const entry = entries.get(item.interrupt.id)
    const record = turn.call(item.toolCallId)
    if (!entry || !record || record.status !== 'awaiting_decision' || staleIds.has(item.interrupt.id)) continue
    if (item.kind === 'ask') asked.set(item.toolCallId, [...(asked.get(item.toolCallId) ?? []), item])
    else if (item.kind === 'approval' && entry.status === 'resolved' && (entry.payload as ApprovalPayload).approved) {
      const approved = await approvalOf(turn, item, entry, record)
      if (!approved.ok) {
        yield* turn.settle(record, approved.status, approved.result)
        continue
      }
      const remember = (entry.payload as ApprovalPayload).remember
      if (remember !== undefined && approved.tool.rememberScopes.includes(remember))
        await rememberApproval(turn, approved.tool, remember, approved.args, item.interrupt.id)
      const checkpoint = { answers: [], approved: { args: approved.args, edited: approved.edited } }
      await turn.writes.saveCheckpoint(record.toolCallId, checkpoint)
    } else if (item.kind === 'guardrail') yield* applyGuardrailDecision(turn, item, entry, record)
    else yield* applyDecision(turn, item, entry, record)
  }
  for (const [toolCallId, group] of asked) {
    const stored = parseCheckpoint(await turn.deps.store.getToolCheckpoint(turn.plan.threadId, toolCallId))
    const checkpoint = withAnswers(stored, group, entries)
    if (checkpoint !== stored) await turn.writes.saveCheckpoint(toolCallId, checkpoint)
  }
  yield* reaskStale(turn, stale)
}

/** Stores a call's new answers, then runs the tool again from the top (docs/approvals.md#asking-from-inside-a-tool). */
async function* answerAsks(
  turn: Turn,
  items: readonly StoredInterrupt[],
  entries: ReadonlyMap<string, ResumeEntry>,
  record: ToolCallRecord,
): AsyncGenerator<AgUiEvent> {
  const tool = turn.deps.agent.tools.get(record.toolName)
  if (!tool || tool.kind !== 'server') {
    yield* turn.settle(record, 'rejected', toolGone(record.toolName))
    return
  }
  const stored = parseCheckpoint(await turn.deps.store.getToolCheckpoint(turn.plan.threadId, record.toolCallId))
  const checkpoint = withAnswers(stored, items, entries)
  // Durable before the tool runs again: a crash from here on replays the same answers.
  if (checkpoint !== stored) await turn.writes.saveCheckpoint(record.toolCallId, checkpoint)
  const args = checkpoint.args === undefined ? requestedArgs(record) : checkpoint.args
  yield* runEffect(turn, tool, record, args, checkpoint.edited === true, checkpoint)
}

async function* applyDecision(
  turn: Turn,
  item: StoredInterrupt,
  entry: ResumeEntry,
  record: ToolCallRecord,
): AsyncGenerator<AgUiEvent> {
  if (entry.status === 'cancelled') {
    yield* turn.settle(record, 'cancelled', {
      status: 'cancelled',
      message: 'The request was cancelled before a decision.',
    })
    return
  }
  if (item.kind === 'input') {
    yield* turn.settle(record, 'succeeded', entry.payload ?? null)
    return
  }
  const approved = await approvalOf(turn, item, entry, record)
  if (!approved.ok) {
    yield* turn.settle(record, approved.status, approved.result)
    return
  }
  const payload = entry.payload as ApprovalPayload
  if (payload.remember !== undefined && approved.tool.rememberScopes.includes(payload.remember)) {
    // Stored before the effect runs: a continuation after a crash makes the same rule (same id), once.
    await rememberApproval(turn, approved.tool, payload.remember, approved.args, item.interrupt.id)
  }
  yield* runEffect(turn, approved.tool, record, approved.args, approved.edited)
}

/**
 * An answered approval checked (`approvedCall`): a stale re-ask carries the arguments the first approval had, edits
 * included (docs/approvals.md#stale-approvals).
 */
export async function approvalOf(
  turn: Turn,
  item: StoredInterrupt,
  entry: ResumeEntry,
  record: ToolCallRecord,
): Promise<ApprovedCall> {
  const payload = entry.payload as ApprovalPayload
  const tool = turn.deps.agent.tools.get(record.toolName)
  const again = staleArguments(item.interrupt)
  const approved = await approvedCall(record, tool, payload, () => again?.args ?? requestedArgs(record), turn.verdicts)
  return approved.ok && again?.edited === true ? { ...approved, edited: true } : approved
}

export async function rememberApproval(
  turn: Turn,
  tool: ResolvedTool,
  scope: RememberScope,
  args: unknown,
  interruptId: string,
): Promise<void> {
  const { store, now } = turn.deps
  const { threadId, runId, principal } = turn.plan
  const decidedBy = (await store.getDecision(threadId, runId))?.decidedBy ?? principal
  await turn.writes.rememberRule(
    ruleFromApproval({
      tool,
      scope,
      args,
      owner: principal,
      threadId: clientThreadId(threadId),
      decidedBy,
      interruptId,
      at: now(),
    }),
  )
}
