import type { Interrupt } from '@interlude/protocol'

/** What a decider check is told about the interrupt a principal wants to answer (docs/approvals.md). */
export interface DecideContext {
  /** The principal that owns the thread. */
  readonly owner: string
  readonly threadId: string
  /** The interrupt as emitted. */
  readonly interrupt: Interrupt
}

/**
 * Whether `principal` may answer one interrupt (docs/approvals.md, "Who may decide"). Sync or async; a throwing
 * check counts as "no" (policy hooks fail closed).
 */
export type CanDecide = (principal: string, ctx: DecideContext) => boolean | Promise<boolean>
