import type { ToolCallRecord } from './records.ts'

/**
 * The admission view's open calls (read with one query, in the model's order) split by what a new input does with
 * them: an awaited result may arrive, a held call is closed by a new user message (docs/protocol.md#tool-results).
 */
export function byStatus(calls: readonly ToolCallRecord[]): {
  awaitingResults: ToolCallRecord[]
  heldCalls: ToolCallRecord[]
} {
  return {
    awaitingResults: calls.filter((c) => c.status === 'awaiting_result'),
    heldCalls: calls.filter((c) => c.status === 'pending'),
  }
}
