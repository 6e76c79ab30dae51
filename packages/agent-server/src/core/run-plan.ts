import type { AgUiEvent, Context, ResumeEntry, Tool } from '@interlude/protocol'
import type { BatchRecord } from '../store/store.ts'

interface RunPlanBase {
  readonly threadId: string
  readonly runId: string
  /** The owner of the thread: tools act for it, also when another principal decided (docs/approvals.md). */
  readonly principal: string
  /** Browser tools declared by the client in `RunAgentInput.tools`. */
  readonly clientTools: readonly Tool[]
  readonly context: readonly Context[]
  /** Set when this plan continues a run whose process died (docs/architecture.md, "Durable continuation"). */
  readonly continuation?: Continuation
}

/** How a continuation starts: what the dead attempt's log lacks or left open. */
export interface Continuation {
  /**
   * Emitted first instead of `RUN_STARTED`: `RUN_STARTED` (and the decision record) only if the log does not have
   * them, then the END events of text messages and tool calls the attempt left open.
   */
  readonly prefix: readonly AgUiEvent[]
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

/** What an admitted decision carries into its run (`resumePlan`). */
export interface AdmittedDecision {
  readonly threadId: string
  readonly runId: string
  /** The thread's owner: tools act for the owner, whoever decided (the decision record names the decider). */
  readonly owner: string
  readonly batch: BatchRecord
  readonly entries: readonly ResumeEntry[]
  readonly allCancelled: boolean
  readonly expired: boolean
  /** Browser tools and context of a resume run; the decisions API and the expiry sweep have none. */
  readonly tools?: readonly Tool[] | undefined
  readonly context?: readonly Context[] | undefined
}

/** The plan of a claimed batch's continuation: one builder for a person's resume and the expiry sweep's decision. */
export function resumePlan(decision: AdmittedDecision): ResumeRunPlan {
  return {
    kind: 'resume',
    threadId: decision.threadId,
    runId: decision.runId,
    principal: decision.owner,
    clientTools: decision.tools ?? [],
    context: decision.context ?? [],
    batch: decision.batch,
    decision: decision.entries,
    allCancelled: decision.allCancelled,
    expired: decision.expired,
  }
}
