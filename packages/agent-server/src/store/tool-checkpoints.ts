/**
 * Per-call checkpoints of tools that ask from inside `execute` (docs/approvals.md#asking-from-inside-a-tool): the
 * answers the call received so far, in order, the results of its `ctx.step`s (docs/approvals.md#memoised-steps) and
 * what a subagent tool keeps of its progress. One row per call, written only by the run that executes the call
 * (fenced), read when the call runs again.
 */
export interface SaveToolCheckpoint {
  readonly threadId: string
  /** The run that writes: the write is refused (`RunNotActiveError`) unless it is the thread's active run. */
  readonly runId: string
  readonly toolCallId: string
  /** The checkpoint as JSON text (`core/tools/tool-asks.ts`). */
  readonly json: string
  /**
   * The thread state as JSON, replaced in the same transaction (a `ctx.step` commits the state its tool changed so
   * far with its result, so neither is kept without the other). Revision +1 when set.
   */
  readonly stateJson?: string
  readonly now: number
}

export interface ToolCheckpointRow {
  readonly json: string
}
