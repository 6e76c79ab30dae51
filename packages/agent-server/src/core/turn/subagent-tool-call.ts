import type { Interrupt } from '@interlude/protocol'
import type { ResolvedTool, ToolContext } from '../../agent/tool.ts'
import { publicMessage, toolResult } from '../ev.ts'
import type { AskRequest } from '../tools/tool-asks.ts'

/**
 * One of a subagent's own tools, run with the parent call's context (docs/approvals.md#subagents): its state changes
 * go to the parent call's state, its steps to the parent call's checkpoint, it cannot ask (`ctx.interrupt`), and a failure is a result the subagent's model reads.
 */
export async function runSubagentTool(
  tool: ResolvedTool,
  callId: string,
  args: unknown,
  parent: ToolContext,
  idempotencyKey: string,
  logError: (message: string, error: unknown) => void,
): Promise<unknown> {
  const context: ToolContext = {
    toolCallId: callId,
    idempotencyKey,
    threadId: parent.threadId,
    runId: parent.runId,
    principal: parent.principal,
    state: structuredClone(parent.state),
    signal: parent.signal,
    updateState: (update) => parent.updateState(update),
    interrupt: () => Promise.reject(new TypeError('ctx.interrupt is not available inside a subagent tool.')),
    // Stored in the parent call's checkpoint, under this call's id.
    step: (name, fn) => parent.step(`${callId}/${name}`, fn),
  }
  try {
    const value = await tool.definition.execute!(args, context)
    // Must be JSON like any tool result.
    toolResult(callId, value)
    return value
  } catch (error) {
    logError(`subagent tool ${tool.name} failed`, error)
    return { status: 'error', error: publicMessage(error, `The tool ${tool.name} failed.`) }
  }
}

/** How a pending request looks in the subagent's own `RUN_FINISHED` (the parent's batch has the stored ones). */
export function preview(request: AskRequest): Interrupt {
  return {
    id: request.id ?? '',
    reason: request.reason,
    message: request.message,
    ...(request.toolCallId !== undefined ? { toolCallId: request.toolCallId } : {}),
    ...(request.subagentRunId !== undefined ? { subagentRunId: request.subagentRunId } : {}),
    responseSchema: request.responseSchema,
    ...(request.metadata ? { metadata: request.metadata } : {}),
  }
}
