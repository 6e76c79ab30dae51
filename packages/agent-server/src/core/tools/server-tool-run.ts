import type { AgUiEvent } from '@interlude/protocol'
import type { PolicyContext, ResolvedTool } from '../../agent/tool.ts'
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
  /** Cancel or shutdown of the run: a subagent's model calls stop. */
  readonly runSignal: AbortSignal
  readonly ledger: EffectsLedger
  readonly writes: RunWrites
  readonly validators: ValidatorCache
  readonly logError: (message: string, error: unknown) => void
}

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
    save: (next) => writes.saveCheckpoint(toolCallId, next),
    validators: run.validators,
  })
  const channel = tool.subagent ? new EventChannel() : undefined
  const runtime =
    tool.subagent && channel
      ? {
          agent: tool.subagent,
          asks,
          emit: (event: AgUiEvent) => channel.push(event),
          validators: run.validators,
          signal: run.runSignal,
          logError: run.logError,
        }
      : undefined
  const invocation = () => toolInvocation(run.policy, run.toolSignal, asks, runtime)
  const work = ledger.execute(tool, toolCallId, run.args, invocation, asks)
  const outcome = channel ? yield* channel.drain(work) : await work
  return { outcome, asks }
}
