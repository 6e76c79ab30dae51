import type { AgUiEvent } from '@interlude/protocol'
import type { PolicyContext, ResolvedTool, ToolContext } from '../../agent/tool.ts'
import type { ValidatorCache } from '../../schema/validator-cache.ts'
import type { AskedOutcome, EffectOutcome, EffectsLedger } from './effects-ledger.ts'
import { toolInvocation } from './effects-ledger.ts'
import { EventChannel } from './event-channel.ts'
import type { RunWrites } from '../run-writes.ts'
import { AskSession } from './tool-asks.ts'
import type { ToolCheckpoint } from './tool-asks.ts'

export interface ServerToolRun {
  readonly tool: ResolvedTool
  readonly toolCallId: string
  readonly args: unknown
  /** The answers the call has (docs/approvals.md#asking-from-inside-a-tool) and a subagent's progress. */
  readonly checkpoint: ToolCheckpoint
  readonly policy: PolicyContext
  /** What the tool sees as `ctx.signal`. */
  readonly toolSignal: AbortSignal
  readonly ledger: EffectsLedger
  readonly writes: RunWrites
  readonly validators: ValidatorCache
  readonly logError: (message: string, error: unknown) => void
  /** The state a step committed (the turn's copy follows it, so a re-execution starts from it). */
  readonly onStateCommitted?: (state: unknown) => void
  /** A subagent tool's agent, offered to its `execute` as `ctx.runSubagent` (from the turn: `core/turn/subagent-run.ts`). */
  readonly subagent?: SubagentRunner
}

/** Runs a subagent tool's agent with the parent call's context and question session; its events go to `emit`. */
export type SubagentRunner = (
  args: unknown,
  context: ToolContext,
  asks: AskSession,
  emit: (event: AgUiEvent) => void,
) => Promise<unknown>

/**
 * One execution of a server tool through the effects ledger, with its `ctx.interrupt` session; a subagent tool's
 * events are yielded while it runs (docs/protocol.md#subagents). Returns the outcome and the session (whose
 * checkpoint and claim the turn needs when the tool asked).
 */
export async function* runServerTool(
  run: ServerToolRun,
): AsyncGenerator<AgUiEvent, { outcome: EffectOutcome | AskedOutcome; asks: AskSession }, undefined> {
  const { tool, toolCallId, ledger, writes } = run
  const asks = new AskSession({
    checkpoint: run.checkpoint,
    claim: () => ledger.claim(toolCallId),
    save: async (next, state) => {
      await writes.saveCheckpoint(toolCallId, next, state)
      if (state !== undefined) run.onStateCommitted?.(state.value)
    },
    validators: run.validators,
  })
  const { subagent } = run
  const channel = subagent ? new EventChannel() : undefined
  // A subagent tool's `execute` runs its agent through `ctx.runSubagent`, its events into this call's stream.
  const runSubagent =
    subagent && channel
      ? (args: unknown, context: ToolContext) => subagent(args, context, asks, (event) => channel.push(event))
      : undefined
  const invocation = () => toolInvocation(run.policy, run.toolSignal, asks, runSubagent)
  const work = ledger.execute(tool, toolCallId, run.args, invocation, asks)
  const outcome = channel ? yield* channel.drain(work) : await work
  return { outcome, asks }
}
