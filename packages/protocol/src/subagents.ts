import type { AgUiEvent } from './ag-ui.ts'

/**
 * A subagent's event in its parent's stream (docs/protocol.md#subagents): `CUSTOM { name: SUBAGENT_EVENT_NAME, value }`.
 * `event` is the subagent's own AG-UI event: `RUN_STARTED` / `RUN_FINISHED` (its `runId` is the `subagentRunId`),
 * `TEXT_MESSAGE_*`, `TOOL_CALL_*` (including `TOOL_CALL_RESULT`).
 */
export const SUBAGENT_EVENT_NAME = 'interlude.subagent'

export interface SubagentEventValue {
  /** Stable for one subagent execution (one parent tool call), across pauses and resumes. */
  readonly subagentRunId: string
  /** The subagent's name (its tool's name in the parent). */
  readonly agent: string
  /** The parent's tool call that runs the subagent. */
  readonly parentToolCallId: string
  readonly event: AgUiEvent
}

/** `metadata.subagent` of an interrupt a subagent raised (the interrupt also carries `subagentRunId`). */
export interface SubagentInterruptMetadata {
  readonly name: string
  readonly toolCallId: string
}
