import { randomUUID } from 'node:crypto'
import { InterludeError } from '@interlude/protocol'
import type { AssistantMessage, Interrupt } from '@interlude/protocol'
import type { ForkStore, NewToolCall, StoredInterrupt, ThreadRecord, ToolCallRecord } from '../../store/store.ts'
import { toolResult } from '../ev.ts'
import type { ForkDeps, ForkPlan } from './fork-thread.ts'
import { FORKED_RESULT, forkedResultText } from './fork-thread.ts'
import { stateOfPause } from './fork-state.ts'
import { renamedIn } from './renamed-ids.ts'

const invalid = (message: string) => new InterludeError('INVALID_INPUT', message, { details: { field: 'at.batchId' } })

/**
 * A fork paused at the batch the run `batchId` paused with (docs/time-travel.md#forks-at-a-batch), decided or not:
 * the history and state of the pause, the model response that asked copied, and the batch open again with new
 * interrupt ids and a fresh deadline — no model call. The calls that were open at the pause get new ids: answering
 * them in the fork is a new decision about a new call, so nothing the parent ran (or runs) is executed again under
 * its id. Their checkpoints (a `ctx.interrupt`'s answers, memoised steps, a subagent's progress) come as they were at
 * the pause.
 */
export async function batchFork(
  deps: ForkDeps,
  forks: ForkStore,
  parent: ThreadRecord,
  batchId: string,
  now: number,
): Promise<ForkPlan> {
  const found = await forks.getBatchOfRun(parent.threadId, batchId)
  if (!found) throw invalid('The thread has no batch with this id (the id of the run that paused with it).')
  const { batch, pause } = found
  if (!pause) throw invalid('This batch was stored before forks were kept; fork at a message instead.')
  const lastPosition = pause.messageCount - 1
  const open = await forks.listUnansweredCalls(parent.threadId, lastPosition)
  const batched = new Set(batch.interrupts.map((i) => i.toolCallId))
  // Server calls are re-recorded under new ids; a browser or external call not in the batch is settled as cancelled.
  const renewed = open.filter((c) => batched.has(c.toolCallId) || c.kind === 'server')
  const dropped = open.filter((c) => !renewed.includes(c))
  const ids = new Map(renewed.map((c) => [c.toolCallId, `call_${randomUUID()}`]))
  const rename = (id: string) => ids.get(id) ?? id
  const calls: NewToolCall[] = renewed.map((c) => ({
    ...callOf(c),
    toolCallId: rename(c.toolCallId),
    status: batched.has(c.toolCallId) ? 'awaiting_decision' : 'pending',
    now,
  }))
  const replaced = await responsesWithNewIds(forks, parent.threadId, renewed, rename)
  const checkpoints: Record<string, string> = {}
  for (const [old, json] of Object.entries(pause.checkpoints)) checkpoints[rename(old)] = renamedIn(json, ids)
  const expiresAt = now + Math.max(0, batch.expiresAt - batch.createdAt)
  const interrupts = batch.interrupts.map((item) => renewInterrupt(item, ids, expiresAt))
  const appended = dropped.map((c) => toolResult(c.toolCallId, FORKED_RESULT).message)
  const state = await stateOfPause(deps, forks, parent, batch.runId)
  return {
    lastPosition,
    replaced,
    appended,
    skipCallIds: renewed.map((c) => c.toolCallId),
    calls,
    cancelled: { toolCallIds: dropped.map((c) => c.toolCallId), result: forkedResultText() },
    checkpoints,
    stateJson: JSON.stringify(state ?? null),
    batch: {
      batchId: `batch_${randomUUID()}`,
      runId: batch.runId,
      interrupts,
      expiresAt,
      onExpiry: batch.onExpiry,
      outcomeJson: JSON.stringify({ type: 'interrupt', interrupts: interrupts.map((i) => i.interrupt) }),
    },
  }
}

function callOf(c: ToolCallRecord): Omit<NewToolCall, 'now'> {
  const { threadId, toolCallId, runId, messageId, toolName, argsText, kind, status } = c
  return { threadId, toolCallId, runId, messageId, toolName, argsText, kind, status }
}

/** The assistant messages that carry renewed calls, with those calls' ids replaced. */
async function responsesWithNewIds(
  forks: ForkStore,
  threadId: string,
  renewed: readonly ToolCallRecord[],
  rename: (id: string) => string,
): Promise<AssistantMessage[]> {
  const replaced: AssistantMessage[] = []
  for (const messageId of new Set(renewed.map((c) => c.messageId))) {
    const found = await forks.getForkMessage(threadId, { messageId })
    if (!found || found.message.role !== 'assistant') continue
    const message = found.message
    const toolCalls = (message.toolCalls ?? []).map((call) => ({ ...call, id: rename(call.id) }))
    replaced.push({ ...message, toolCalls })
  }
  return replaced
}

/**
 * The same question with a new id, its call's new id and the fork's deadline. Every mention of a renewed call id in
 * the interrupt (a subagent's `subagentRunId` and `metadata.subagent`) names the new call.
 */
function renewInterrupt(item: StoredInterrupt, ids: ReadonlyMap<string, string>, expiresAt: number): StoredInterrupt {
  const renamed = JSON.parse(renamedIn(JSON.stringify(item.interrupt), ids)) as Interrupt
  const interrupt: Interrupt = {
    ...renamed,
    id: `int_${randomUUID()}`,
    ...(renamed.expiresAt !== undefined ? { expiresAt: new Date(expiresAt).toISOString() } : {}),
  }
  return { ...item, toolCallId: ids.get(item.toolCallId) ?? item.toolCallId, interrupt }
}
