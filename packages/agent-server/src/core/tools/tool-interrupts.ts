import { randomUUID } from 'node:crypto'
import type { ResumeEntry } from '@interlude/protocol'
import type { ResolvedTool } from '../../agent/tool.ts'
import type { StoredInterrupt } from '../../store/store.ts'
import type { ExpiryDefaults } from '../expiry-policy.ts'
import { interruptPolicy } from '../expiry-policy.ts'
import type { PendingInterrupt } from './interrupts.ts'
import type { AskRequest, ToolAnswer, ToolCheckpoint } from './tool-asks.ts'

/**
 * The interrupt of a question a tool asked from inside `execute` (docs/approvals.md#asking-from-inside-a-tool):
 * stored as kind `ask` on the call, with the tool's deadline; its expiry cancels it (there is no "no" to a question).
 */
export function askInterruptFor(
  tool: ResolvedTool,
  toolCallId: string,
  request: AskRequest,
  expiry: ExpiryDefaults,
): PendingInterrupt {
  const stored: StoredInterrupt = {
    kind: 'ask',
    toolCallId,
    toolName: tool.name,
    interrupt: {
      id: request.id ?? `int_${randomUUID()}`,
      reason: request.reason,
      message: request.message,
      toolCallId: request.toolCallId ?? toolCallId,
      ...(request.subagentRunId !== undefined ? { subagentRunId: request.subagentRunId } : {}),
      responseSchema: request.responseSchema,
      // A subagent's interrupt names the subagent's tool (its decision is routed by the stored toolCallId).
      metadata:
        request.subagentRunId !== undefined
          ? { toolName: tool.name, ...request.metadata }
          : { ...request.metadata, toolName: tool.name },
    },
  }
  return { stored, timeoutMs: tool.timeoutMs ?? expiry.ttlMs, onExpiry: interruptPolicy(tool, 'ask', expiry) }
}

/**
 * The checkpoint with the answers of `items` (one call's questions of a batch, in batch order) appended; answers it
 * has already (a continuation applying the same decision again) are not added twice.
 */
export function withAnswers(
  checkpoint: ToolCheckpoint,
  items: readonly StoredInterrupt[],
  entries: ReadonlyMap<string, ResumeEntry>,
): ToolCheckpoint {
  const known = new Set(checkpoint.answers.map((a) => a.interruptId))
  const added: ToolAnswer[] = []
  for (const item of items) {
    const id = item.interrupt.id
    const entry = entries.get(id)
    if (known.has(id) || entry === undefined) continue
    added.push(
      entry.status === 'cancelled'
        ? { interruptId: id, status: 'cancelled' }
        : { interruptId: id, status: 'resolved', payload: entry.payload ?? null },
    )
  }
  return added.length === 0 ? checkpoint : { ...checkpoint, answers: [...checkpoint.answers, ...added] }
}
