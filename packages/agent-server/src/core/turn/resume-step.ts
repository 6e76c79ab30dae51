import type { AgUiEvent, RememberScope, ResumeEntry } from '@interlude/protocol'
import type { ResolvedTool } from '../../agent/tool.ts'
import type { StoredInterrupt, ToolCallRecord } from '../../store/store.ts'
import { clientThreadId } from '../../store/thread-key.ts'
import type { ResumeRunPlan } from '../run-plan.ts'
import { parseJson } from '../strict-json.ts'
import { approvedCall, toolGone } from '../tools/approved-call.ts'
import type { ApprovalPayload } from '../tools/approved-call.ts'
import { ruleFromApproval } from '../tools/permission-rules.ts'
import { authorizeCall } from '../tools/tool-verdicts.ts'
import { parseCheckpoint } from '../tools/tool-asks.ts'
import { withAnswers } from '../tools/tool-interrupts.ts'
import { runEffect, storeBatch } from './tool-step.ts'
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
  for (const open of turn.openCalls()) {
    const record = turn.call(open.toolCallId)
    if (!record) continue
    const items = byCall.get(record.toolCallId)
    if (items === undefined) {
      // A held call after one that asked again waits for the new batch.
      if (turn.isHeld(record) && turn.asked.length === 0) yield* runHeld(turn, record, plan.allCancelled)
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
      if (entry) yield* applyDecision(turn, item, entry, record)
    }
  }
  return turn.asked.length > 0 ? await storeBatch(turn, []) : undefined
}

/**
 * A held call runs now, as it would have without the pause — `authorize` again first (the resource may have changed
 * while the batch waited). A batch all cancelled abandons the turn: its held calls never run.
 */
async function* runHeld(turn: Turn, record: ToolCallRecord, cancelled: boolean): AsyncGenerator<AgUiEvent> {
  if (cancelled) {
    yield* turn.settle(record, 'cancelled', { status: 'cancelled', message: HELD_CANCELLED })
    return
  }
  const tool = turn.deps.agent.tools.get(record.toolName)
  if (!tool) {
    yield* turn.settle(record, 'rejected', toolGone(record.toolName))
    return
  }
  const args = requestedArgs(record)
  const denial = await authorizeCall(tool, args, record.toolCallId, turn.verdicts)
  if (denial !== undefined) {
    yield* turn.settle(record, 'denied', { status: 'denied', reason: denial })
    return
  }
  yield* runEffect(turn, tool, record, args)
}

const HELD_CANCELLED = 'The decision this call waited for was cancelled; it did not run.'

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
  const payload = entry.payload as ApprovalPayload
  const tool = turn.deps.agent.tools.get(record.toolName)
  const approved = await approvedCall(record, tool, payload, () => requestedArgs(record), turn.verdicts)
  if (!approved.ok) {
    yield* turn.settle(record, approved.status, approved.result)
    return
  }
  if (payload.remember !== undefined && approved.tool.rememberScopes.includes(payload.remember)) {
    // Stored before the effect runs: a continuation after a crash makes the same rule (same id), once.
    await rememberApproval(turn, approved.tool, payload.remember, approved.args, item.interrupt.id)
  }
  yield* runEffect(turn, approved.tool, record, approved.args, approved.edited)
}

/** The arguments the model proposed (`{}` when they are not JSON: the call was rejected before it could run). */
function requestedArgs(record: ToolCallRecord): unknown {
  const parsed = parseJson(record.argsText)
  return parsed.ok ? parsed.value : {}
}

async function rememberApproval(
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
