import type { Context, ResumeEntry, Tool } from '@interlude/protocol'
import type { BatchRecord } from '../store/store.ts'

interface RunPlanBase {
  readonly threadId: string
  readonly runId: string
  /** The owner of the thread (the authenticated principal). */
  readonly principal: string
  /** Browser tools declared by the client in `RunAgentInput.tools`. */
  readonly clientTools: readonly Tool[]
  readonly context: readonly Context[]
}

/** A run with new input (user messages and/or browser/external tool results). */
export interface InputRunPlan extends RunPlanBase {
  readonly kind: 'input'
}

/** A run that continues a paused turn with the admitted decision for its batch. */
export interface ResumeRunPlan extends RunPlanBase {
  readonly kind: 'resume'
  readonly batch: BatchRecord
  readonly decision: readonly ResumeEntry[]
  readonly allCancelled: boolean
  /**
   * The batch had expired: an all-cancelled resume after the deadline, or the expiry sweep's decision
   * (docs/approvals.md#deadlines). It closes as `expired`.
   */
  readonly expired: boolean
}

/** What admission hands to the execution core. */
export type RunPlan = InputRunPlan | ResumeRunPlan
