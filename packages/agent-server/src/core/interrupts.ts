import { randomUUID } from 'node:crypto'
import type { ResolvedTool } from '../agent/tool.ts'
import type { NewBatch, StoredInterrupt } from '../store/store.ts'

/**
 * The interrupt of an undecided call (docs/protocol.md): `input_required` for a human tool,
 * `tool_call` (an approval) otherwise. Its `expiresAt` is stamped once per batch (`interruptBatch`).
 */
export function interruptFor(tool: ResolvedTool, toolCallId: string, args: unknown): StoredInterrupt {
  const id = `int_${randomUUID()}`
  const human = tool.definition.human
  if (human) {
    return {
      kind: 'input',
      toolCallId,
      toolName: tool.name,
      interrupt: {
        id,
        reason: 'input_required',
        message: human.message(args),
        toolCallId,
        responseSchema: human.responseSchema,
        metadata: { toolName: tool.name },
      },
    }
  }
  const message = tool.definition.approvalMessage?.(args) ?? `Allow ${tool.name} with ${JSON.stringify(args)}?`
  return {
    kind: 'approval',
    toolCallId,
    toolName: tool.name,
    interrupt: {
      id,
      reason: 'tool_call',
      message,
      toolCallId,
      responseSchema: tool.approvalSchema,
      metadata: { toolName: tool.name, arguments: args, allowEdits: tool.definition.allowEdits === true },
    },
  }
}

/**
 * The batch to store. One clock read per batch: every interrupt and the stored batch share one
 * expiry, so admission, the snapshot and the inbox agree.
 */
export function interruptBatch(
  run: { readonly threadId: string; readonly runId: string },
  interrupts: readonly StoredInterrupt[],
  createdAt: number,
  ttlMs: number,
): NewBatch {
  const expiresAt = createdAt + ttlMs
  const expiresAtIso = new Date(expiresAt).toISOString()
  return {
    batchId: `batch_${randomUUID()}`,
    threadId: run.threadId,
    runId: run.runId,
    interrupts: interrupts.map((i): StoredInterrupt => ({
      ...i,
      interrupt: { ...i.interrupt, expiresAt: expiresAtIso },
    })),
    createdAt,
    expiresAt,
    onExpiry: 'keep',
  }
}
